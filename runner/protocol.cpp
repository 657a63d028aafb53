#include "runner/protocol.h"

#include "common/text.h"

namespace perfwatch::runner {

using nlohmann::json;

const char* to_string(LineKind kind) {
  switch (kind) {
    case LineKind::kHeader: return "header";
    case LineKind::kVariant: return "variant";
    case LineKind::kCheck: return "check";
    case LineKind::kTrial: return "trial";
    case LineKind::kSkipped: return "skipped";
    case LineKind::kFooter: return "footer";
    case LineKind::kError: return "error";
  }
  return "?";
}

Result<Protocol> Protocol::load(int version) {
  if (version != 1 && version != 2)
    return fail(Error{ErrorCode::kInvalidArgument, "schema_version", "no bench protocol version " + std::to_string(version)});
  Protocol p;
  p.version_ = version;
  const std::string dir = version == 2 ? "bench/v2/" : "bench/";
  for (LineKind kind : {LineKind::kHeader, LineKind::kVariant, LineKind::kCheck, LineKind::kTrial, LineKind::kSkipped,
                        LineKind::kFooter, LineKind::kError}) {
    auto schema = schemas::Schema::load(dir + to_string(kind) + ".schema.json");
    if (!schema) return fail(schema.error());
    p.lines_.emplace_back(kind, std::move(*schema));
  }
  auto plan = schemas::Schema::load(dir + "plan.schema.json");
  if (!plan) return fail(plan.error());
  p.plan_.push_back(std::move(*plan));
  return p;
}

Result<BenchLine> Protocol::parse(std::string_view text, int line_no) const {
  std::string where = "bench stdout line " + std::to_string(line_no);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    std::string shown = valid_utf8(text.substr(0, 120));
    return fail(protocol_error(where, "not a JSON object: '" + shown + (text.size() > 120 ? "...'" : "'")));
  }
  auto kind = doc.find("kind");
  if (kind == doc.end() || !kind->is_string()) return fail(protocol_error(where, "kind: missing"));
  for (const auto& [k, schema] : lines_) {
    if (*kind != to_string(k)) continue;
    if (auto ok = schema.validate(doc, where); !ok) {
      Error e = ok.error();
      e.code = ErrorCode::kProtocol;
      return fail(e);
    }
    return BenchLine{k, std::move(doc)};
  }
  return fail(protocol_error(where + ": kind", "'" + kind->get<std::string>() + "' is not a line the bench may write"));
}

Result<json> Protocol::make_plan(const Manifest& m, const std::vector<PointSpec>& points, std::uint64_t seed) const {
  json plan = {{"kind", "plan"}, {"schema_version", version_}, {"backend", m.bench.backend}, {"seed", seed}};
  json variants = json::array();
  for (const auto& v : m.variants) variants.push_back({{"name", v.name}, {"params", v.params}});
  plan["variants"] = variants;
  json pts = json::array();
  if (version_ == 1) {
    // Version 1's point is its four axes beside the id; its tolerances are
    // the plan's "check" (the manifest's check, kept as the bench's params).
    for (const auto& p : points) {
      json point = {{"id", p.id}};
      for (const auto& [name, value] : p.axes.items()) point[name] = json(value);
      pts.push_back(std::move(point));
    }
    plan["check"] = m.bench.params;
    plan["timing"] = {{"min_trial_ms", m.trials.min_trial_ms}, {"warmup_ms", m.trials.warmup_ms}, {"threads", m.bench.threads}};
  } else {
    for (const auto& p : points) pts.push_back({{"id", p.id}, {"axes", json(p.axes)}});
    json metrics = json::array();
    for (const auto& metric : m.metrics) {
      json entry = {{"name", metric.name}, {"unit", metric.unit}, {"direction", to_string(metric.direction)}};
      if (!metric.description.empty()) entry["description"] = metric.description;
      metrics.push_back(std::move(entry));
    }
    plan["metrics"] = std::move(metrics);
    plan["judged_metric"] = m.metric.name;
    plan["params"] = m.bench.params;
    plan["timing"] = {{"min_trial_ms", m.trials.min_trial_ms}, {"warmup_ms", m.trials.warmup_ms}};
  }
  plan["points"] = pts;
  if (auto ok = plan_.front().validate(plan, "plan"); !ok) return fail(ok.error());
  return plan;
}

json Protocol::measure_request(const std::string& variant, const std::string& point, int trials) {
  return {{"kind", "measure"}, {"variant", variant}, {"point", point}, {"trials", trials}};
}

namespace {

// Version 1's four metrics, each a required field of its trial line.
constexpr const char* kV1Metrics[] = {"time_us", "tokens_per_s", "bytes_per_s", "flops_per_s"};

std::optional<double> number_at(const json& line, const char* key) {
  auto it = line.find(key);
  if (it == line.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

CheckLine Protocol::check(const json& line, const std::string& point) const {
  CheckLine c;
  c.variant = line["variant"].get<std::string>();
  c.point = point;
  c.status = line["status"].get<std::string>();
  c.reason = line.value("reason", "");
  if (version_ == 2) {
    c.errors = line.value("errors", json::object());
    c.tolerance = line.value("tolerance", json::object());
    c.detail = line.value("detail", json::object());
    return c;
  }
  // Version 1 names its two errors as fields; what else it says is detail.
  for (const char* name : {"rel_l2_o", "max_abs_lse"})
    if (line.contains(name)) c.errors[name] = line[name];
  if (line.contains("tolerance")) c.tolerance = line["tolerance"];
  for (const auto& [k, v] : line.items()) {
    if (k == "kind" || k == "variant" || k == "point" || k == "status" || k == "reason" || k == "rel_l2_o" ||
        k == "max_abs_lse" || k == "tolerance")
      continue;
    c.detail[k] = v;
  }
  return c;
}

TrialLine Protocol::trial(const json& line, const std::string& point) const {
  TrialLine t;
  t.variant = line["variant"].get<std::string>();
  t.point = point;
  t.trial_no = line["trial"].get<int>();
  if (line.contains("steps")) t.steps = line["steps"].get<std::int64_t>();
  t.throttled = line.value("throttled", false);
  if (version_ == 2) {
    for (const auto& [name, value] : line["metrics"].items()) t.metrics[name] = value.get<double>();
    t.clock_mhz = number_at(line, "clock_mhz");
  } else {
    for (const char* name : kV1Metrics) t.metrics[name] = line[name].get<double>();
    t.clock_mhz = number_at(line, "sm_clock_mhz");
  }
  return t;
}

SkippedLine Protocol::skipped(const json& line, const std::string& point) const {
  return {line["variant"].get<std::string>(), point, line.value("status", "unknown"), line["reason"].get<std::string>()};
}

Status check_trial_metrics(const TrialLine& trial, const Manifest& manifest) {
  for (const auto& [name, value] : trial.metrics) {
    if (!manifest.find_metric(name))
      return fail(protocol_error("metrics." + name, "is not a metric the manifest declares"));
  }
  if (!trial.metrics.count(manifest.metric.name))
    return fail(protocol_error("metrics." + manifest.metric.name, "missing (the manifest's judged metric)"));
  return {};
}

}  // namespace perfwatch::runner
