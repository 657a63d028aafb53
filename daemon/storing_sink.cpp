#include "daemon/storing_sink.h"

#include <unistd.h>

#include "analysis/summary.h"
#include "store/analysis_store.h"

namespace perfwatch::daemon {

using nlohmann::json;

store::SummaryRecord make_summary(store::RunId run, store::VariantId variant, store::PointId point,
                                  const std::string& metric, const std::vector<double>& values,
                                  int dropped_throttled, const std::string& stop_reason) {
  store::SummaryRecord s;
  s.run_id = run;
  s.variant_id = variant;
  s.point_id = point;
  s.metric = metric;
  s.n = static_cast<std::int64_t>(values.size());
  s.dropped_throttled = dropped_throttled;
  s.stop_reason = stop_reason;
  if (!values.empty()) {
    analysis::Summary sum = analysis::summarize(values);
    s.median = sum.median;
    s.ci_low = sum.ci_low;
    s.ci_high = sum.ci_high;
    s.mean = sum.mean;
    s.stddev = sum.stddev;
    s.minimum = sum.min;
    s.maximum = sum.max;
  }
  return s;
}

StoringSink::StoringSink(store::Database& db, store::RunId run, const runner::Manifest& manifest,
                         json extra_provenance, std::function<void(const runner::SweepProgress&)> progress,
                         std::string testbed_name, std::string testbed_host)
    : db_(db), writer_(db), run_(run), manifest_(manifest), extra_provenance_(std::move(extra_provenance)),
      progress_(std::move(progress)), testbed_name_(std::move(testbed_name)), testbed_host_(std::move(testbed_host)) {
  for (const auto& p : manifest_.points) specs_[p.key] = &p;
}

std::optional<std::string> StoringSink::failure() const {
  if (status_) return std::nullopt;
  return status_.error().to_string();
}

void StoringSink::keep(Status s) {
  if (!s && status_) status_ = s;
}

void StoringSink::on_header(const json& header) {
  backend_ = header["backend"].get<std::string>();
  std::string device = header["device"]["name"].get<std::string>();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  store::TestbedRecord bed;
  bed.hostname = testbed_host_.empty() ? std::string(host) : testbed_host_;
  bed.backend = backend_ == "cuda" ? store::Backend::kCuda : store::Backend::kCpu;
  bed.device_name = device;
  // Noise is a property of a machine and its device: one testbed each,
  // unless the executor groups them (the GPUs of one model, a partition).
  bed.name = testbed_name_.empty() ? "{host}/{backend}/{device}" : testbed_name_;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{host}", host}, {"{backend}", backend_},
                                   {"{device}", device}}) {
    for (std::size_t at; (at = bed.name.find(key)) != std::string::npos;) bed.name.replace(at, key.size(), value);
  }
  auto id = writer_.ensure_testbed(bed);
  if (!id) {
    keep(fail(id.error()));
  } else {
    testbed_ = *id;
  }
  json provenance = header;
  for (auto& [k, v] : extra_provenance_.items()) provenance[k] = v;
  std::optional<std::int64_t> seed;
  if (header.contains("seed")) seed = header["seed"].get<std::int64_t>();
  keep(writer_.set_provenance(run_, testbed_, provenance, seed));
}

void StoringSink::on_variant(const json& line) {
  store::VariantRecord v;
  v.run_id = run_;
  v.name = line["variant"].get<std::string>();
  v.params = line["params"];
  v.is_baseline = v.name == manifest_.baseline().name;
  v.status = line["status"] == "ok" ? store::VariantStatus::kOk : store::VariantStatus::kInfeasible;
  v.reason = line.value("reason", "");
  json resources = json::object();
  if (line.contains("kernels")) resources["kernels"] = line["kernels"];
  if (line.contains("ignored_params")) resources["ignored_params"] = line["ignored_params"];
  v.resources = resources;
  auto id = writer_.add_variant(v);
  if (!id) return keep(fail(id.error()));
  variants_[v.name] = *id;
}

store::PointId StoringSink::point_id(const std::string& key) {
  if (auto it = points_.find(key); it != points_.end()) return it->second;
  store::PointRecord p;
  p.key = key;
  if (auto spec = specs_.find(key); spec != specs_.end()) {
    p.label = spec->second->label;
    p.axes = spec->second->axes;
  }
  auto id = writer_.ensure_point(p);
  if (!id) {
    keep(fail(id.error()));
    return 0;
  }
  points_[key] = *id;
  return *id;
}

void StoringSink::on_check(const runner::CheckLine& line) {
  store::CheckRecord c;
  c.run_id = run_;
  c.variant_id = variants_[line.variant];
  c.point_id = point_id(line.point);
  c.status = store::parse_check_status(line.status).value_or(store::CheckStatus::kUnknown);
  c.reason = line.reason;
  if (auto e = line.errors.find("rel_l2_o"); e != line.errors.end() && e->is_number()) c.rel_l2_o = e->get<double>();
  if (auto e = line.errors.find("max_abs_lse"); e != line.errors.end() && e->is_number()) c.max_abs_lse = e->get<double>();
  json detail = line.detail;
  if (!line.errors.empty()) detail["errors"] = line.errors;
  if (!line.tolerance.empty()) detail["tolerance"] = line.tolerance;
  c.detail = detail;
  keep(writer_.record_check(c));
}

void StoringSink::on_trial(const runner::TrialLine& trial) {
  store::TrialRecord t;
  t.run_id = run_;
  t.variant_id = variants_[trial.variant];
  t.point_id = point_id(trial.point);
  t.trial_no = trial.trial_no;
  t.metrics = trial.metrics;
  t.steps = trial.steps;
  t.sm_clock_mhz = trial.clock_mhz;
  t.throttled = trial.throttled;
  keep(writer_.insert_trial(t));
  Cell& cell = cells_[{trial.variant, trial.point}];
  if (t.throttled) {
    ++cell.dropped_throttled;
  } else {
    for (const auto& [name, value] : trial.metrics) cell.values[name].push_back(value);
  }
}

void StoringSink::on_skipped(const runner::SkippedLine& line) {
  // The check line (if any) already said why; a skip without one (an unknown
  // pair) is recorded as a check so the table shows it.
  if (!variants_.count(line.variant)) return;
  store::CheckRecord c;
  c.run_id = run_;
  c.variant_id = variants_[line.variant];
  c.point_id = point_id(line.point);
  c.status = store::parse_check_status(line.status).value_or(store::CheckStatus::kUnknown);
  c.reason = line.reason;
  auto existing = store::RunReader(db_).checks(run_);
  if (existing) {
    for (const auto& e : *existing) {
      if (e.variant_id == c.variant_id && e.point_id == c.point_id) return;
    }
  }
  keep(writer_.record_check(c));
}

void StoringSink::summarise(const std::string& variant, const std::string& point, Cell& cell, const std::string& reason) {
  cell.summarised = true;
  // Every declared metric the cell's trials carried, so that a reader can show
  // any of them; the judged one always (with n = 0 when every trial was throttled).
  std::vector<store::SummaryRecord> summaries;
  for (const auto& metric : manifest_.metrics) {
    auto values = cell.values.find(metric.name);
    const bool judged = metric.name == manifest_.metric.name;
    if (values == cell.values.end() && !judged) continue;
    auto summary = make_summary(run_, variants_[variant], point_id(point), metric.name,
                                values == cell.values.end() ? std::vector<double>{} : values->second,
                                cell.dropped_throttled, reason);
    summary.judged = judged;
    summaries.push_back(std::move(summary));
  }
  keep(store::AnalysisWriter(db_).put_summaries(summaries));
}

void StoringSink::on_point_done(const std::string& variant, const runner::PointSpec& point,
                                const std::vector<double>&, int, analysis::StopReason reason) {
  summarise(variant, point.key, cells_[{variant, point.key}], analysis::to_string(reason));
}

void StoringSink::summarise_unfinished() {
  for (auto& [key, cell] : cells_) {
    if (!cell.summarised && (cell.values.count(manifest_.metric.name) || cell.dropped_throttled > 0)) {
      summarise(key.first, key.second, cell, "run_ended");
    }
  }
}

void StoringSink::on_progress(const runner::SweepProgress& progress) {
  if (progress_) progress_(progress);
}

}  // namespace perfwatch::daemon
