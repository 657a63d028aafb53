#include "views/fragments.h"

#include <cmath>

#include "analysis/compare.h"
#include "analysis/delta.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string word(auto e) { return std::string(store::to_string(e)); }

}  // namespace

json number_or_null(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

json commit_brief(const store::CommitRecord& c, const std::string& inherited_from_sha) {
  return {{"id", c.id},
          {"sha", c.sha},
          {"short_sha", c.sha.substr(0, 10)},
          {"subject", c.subject},
          {"author", c.author},
          {"committed_at", c.committed_at},
          {"inherited_from", inherited_from_sha.empty() ? json(nullptr) : json(inherited_from_sha)},
          {"perf_hypothesis", c.perf_hypothesis},
          {"perf_experiment", c.perf_experiment}};
}

json commit_full(const store::CommitRecord& c, const std::string& inherited_from_sha) {
  json out = commit_brief(c, inherited_from_sha);
  out["repo_id"] = c.repo_id;
  out["parent_sha"] = c.parent_sha;
  out["email"] = c.email;
  out["message"] = c.message;
  out["paths_hash"] = c.paths_hash;
  out["recorded_at"] = c.recorded_at;
  return out;
}

json point_json(const store::PointRecord& p) {
  // The axes as an array of {name, value}: a JSON object's key order is not
  // kept by every reader, and the manifest's order is the order people read.
  json axes = json::array();
  for (const auto& [name, value] : p.axes.items()) axes.push_back({{"name", name}, {"value", json(value)}});
  return {{"id", p.id}, {"key", p.key}, {"label", point_label(p)}, {"axes", std::move(axes)}};
}

json band_json(const store::NoiseBandRecord& b) {
  return {{"band_rel", b.band_rel}, {"calibrated", b.calibrated}, {"source", word(b.source)},
          {"method", b.method},     {"k_runs", b.k_runs},         {"updated_at", b.updated_at}};
}

json pooled_json(const store::CommitSummaryRecord& s) {
  return {{"geomean_of_run_medians", s.geomean_of_run_medians},
          {"ci_low", number_or_null(s.ci_low)},
          {"ci_high", number_or_null(s.ci_high)},
          {"runs", s.runs}};
}

json default_band_json(double band_rel) {
  return {{"band_rel", band_rel},
          {"calibrated", false},
          {"source", "default"},
          {"method", "the manifest's default band; not measured yet (run perfwatch noise)"},
          {"k_runs", 0},
          {"updated_at", nullptr}};
}

json flag_brief(const store::FlagRecord& f) {
  // The band and test are in the flag's evidence (judge/flags.cpp) when its
  // look stored them.
  std::optional<double> band_rel;
  std::optional<bool> calibrated;
  if (auto b = f.detail.find("band_rel"); b != f.detail.end() && b->is_number()) band_rel = b->get<double>();
  if (auto c = f.detail.find("band_calibrated"); c != f.detail.end() && c->is_boolean()) calibrated = c->get<bool>();
  json ack = nullptr;
  if (f.acknowledged) ack = {{"reason", f.acknowledged->reason}, {"by", f.acknowledged->by}, {"at", f.acknowledged->at}};
  json withdrawn = nullptr;
  if (f.withdrawn) withdrawn = {{"reason", f.withdrawn->reason}, {"at", f.withdrawn->at}};
  return {{"id", f.id},
          {"commit_id", f.commit_id},
          {"testbed_id", f.testbed_id},
          {"variant", f.variant},
          {"point_id", f.point_id},
          {"kind", word(f.kind)},
          {"magnitude_rel", f.magnitude_rel},
          {"comparison_id", or_null(f.comparison_id)},
          {"detail", f.detail},
          {"created_at", f.created_at},
          {"acknowledged", ack},
          {"withdrawn", withdrawn},
          {"judged_by", judged_by_json(band_rel, calibrated)}};
}

json flag_json(const store::FlagView& v, const std::string& label) {
  json out = flag_brief(v.flag);
  out["repo_id"] = v.repo_id;
  out["sha"] = v.sha;
  out["subject"] = v.subject;
  out["point_key"] = v.point_key;
  out["point_label"] = label.empty() ? v.point_key : label;
  return out;
}

json experiment_json(const store::ExperimentRecord& e) {
  json refs = json::array();
  for (const auto& r : e.refs)
    refs.push_back({{"commit_id", or_null(r.commit_id)}, {"run_id", or_null(r.run_id)}, {"role", r.role}});
  return {{"id", e.id},
          {"ident", e.ident},
          {"repo_id", or_null(e.repo_id)},
          {"hypothesis", e.hypothesis},
          {"source", word(e.source)},
          {"group_key", e.group_key},
          {"metric", e.metric},
          {"testbed_id", or_null(e.testbed_id)},
          {"baseline", e.baseline},
          {"candidates", e.candidates},
          {"verdict", word(e.verdict)},
          {"conclusion", e.conclusion},
          {"created_at", e.created_at},
          {"updated_at", e.updated_at},
          {"refs", std::move(refs)}};
}

json evidence_json(const store::EvidenceView& v, const std::string& label, bool paired) {
  const auto& e = v.evidence;
  return {{"candidate", e.candidate},
          {"point_id", e.point_id},
          {"point_key", v.point_key},
          {"point_label", label.empty() ? v.point_key : label},
          {"baseline_value", number_or_null(e.baseline_value)},
          {"candidate_value", number_or_null(e.candidate_value)},
          {"delta_rel", number_or_null(e.delta_rel)},
          {"band_rel", number_or_null(e.band_rel)},
          {"p_value", number_or_null(e.p_value)},
          {"runs", e.runs},
          {"verdict", word(e.verdict)},
          {"judged_by", judged_by_json(e.band_rel, e.band_calibrated, paired)}};
}

json run_json(const store::RunRecord& r, bool with_tails) {
  json out = {{"id", r.id},
              {"commit_id", r.commit_id},
              {"build_id", or_null(r.build_id)},
              {"testbed_id", or_null(r.testbed_id)},
              {"job_id", or_null(r.job_id)},
              {"kind", word(r.kind)},
              {"purpose", r.purpose},
              {"status", word(r.status)},
              {"exit_code", or_null(r.exit_code)},
              {"signal", or_null(r.signal)},
              {"message", r.message},
              {"started_at", r.started_at},
              {"finished_at", or_null(r.finished_at)},
              {"wall_s", number_or_null(r.wall_s)},
              {"seed", or_null(r.seed)},
              {"trial_count", r.trial_count}};
  if (with_tails) {
    out["provenance"] = r.provenance;
    out["stdout_tail"] = r.stdout_tail;
    out["stderr_tail"] = r.stderr_tail;
  }
  return out;
}

json build_json(const store::BuildRecord& b) {
  return {{"id", b.id},
          {"status", word(b.status)},
          {"exit_code", or_null(b.exit_code)},
          {"duration_s", b.duration_s},
          {"toolchain", b.toolchain},
          {"log_tail", b.log_tail},
          {"started_at", b.started_at},
          {"finished_at", or_null(b.finished_at)}};
}

json testbed_json(const store::TestbedRecord& t) {
  return {{"id", t.id}, {"name", t.name}, {"hostname", t.hostname}, {"backend", word(t.backend)},
          {"device_name", t.device_name}};
}

json variant_json(const store::VariantRecord& v) {
  return {{"id", v.id},         {"name", v.name},     {"params", v.params},        {"is_baseline", v.is_baseline},
          {"status", word(v.status)}, {"reason", v.reason}, {"resources", v.resources}};
}

json summary_json(const store::SummaryRecord& s) {
  return {{"metric", s.metric},
          {"n", s.n},
          {"median", number_or_null(s.median)},
          {"ci_low", number_or_null(s.ci_low)},
          {"ci_high", number_or_null(s.ci_high)},
          {"mean", number_or_null(s.mean)},
          {"stddev", number_or_null(s.stddev)},
          {"min", number_or_null(s.minimum)},
          {"max", number_or_null(s.maximum)},
          {"dropped_throttled", s.dropped_throttled},
          {"stop_reason", s.stop_reason}};
}

json check_json(const store::CheckRecord& c) {
  return {{"status", word(c.status)},
          {"reason", c.reason},
          {"rel_l2_o", number_or_null(c.rel_l2_o)},
          {"max_abs_lse", number_or_null(c.max_abs_lse)}};
}

json job_json(const store::JobRecord& j) {
  return {{"id", j.id},
          {"repo_id", j.repo_id},
          {"commit_sha", j.commit_sha},
          {"branch", j.branch},
          {"kind", word(j.kind)},
          {"state", word(j.state)},
          {"attempts", j.attempts},
          {"stops", j.stops},
          {"priority", j.priority},
          {"retry_of", or_null(j.retry_of)},
          {"enqueued_at", j.enqueued_at},
          {"started_at", or_null(j.started_at)},
          {"finished_at", or_null(j.finished_at)},
          {"message", j.message},
          {"run_ids", j.run_ids}};
}

json annotation_json(const store::AnnotationRecord& a) {
  return {{"id", a.id},   {"commit_id", or_null(a.commit_id)}, {"run_id", or_null(a.run_id)},
          {"text", a.text}, {"author", a.author},              {"at", a.at}};
}

json judged_by_json(const std::optional<double>& band_rel, const std::optional<bool>& calibrated, bool paired) {
  return {{"band_rel", number_or_null(band_rel)},
          {"band", !calibrated ? "unknown" : *calibrated ? "measured" : "default"},
          {"test", calibrated ? json(analysis::test_name(*calibrated, paired)) : json(nullptr)},
          {"alpha", analysis::ComparePolicy{}.alpha}};
}

json comparison_json(const store::ComparisonRecord& c) {
  const std::optional<double> delta = analysis::delta_rel_of_ratio(c.ratio);
  return {{"id", c.id},
          {"against_commit_id", c.against_commit_id},
          {"basis", word(c.basis)},
          {"testbed_id", c.testbed_id},
          {"variant", c.variant},
          {"point_id", c.point_id},
          {"metric", c.metric},
          {"ratio", number_or_null(c.ratio)},
          {"delta_rel", number_or_null(delta)},
          {"ci_low", number_or_null(c.ci_low)},
          {"ci_high", number_or_null(c.ci_high)},
          {"p_value", number_or_null(c.p_value)},
          {"band_rel", number_or_null(c.band_rel)},
          {"runs", c.runs},
          {"against_runs", c.against_runs},
          {"verdict", word(c.verdict)},
          {"judged_by", judged_by_json(c.band_rel, c.band_calibrated)}};
}

}  // namespace perfwatch::views
