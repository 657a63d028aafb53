#include "store/detail/rows.h"

namespace perfwatch::store::detail {

RepoRecord read_repo(const Statement& s) {
  return {s.get<RepoId>("id"), s.get<std::string>("path"), s.get<std::string>("url"), s.get<std::string>("name"),
          s.get<UnixSeconds>("created_at")};
}

BranchRecord read_branch(const Statement& s) {
  return {s.get<RepoId>("repo_id"), s.get<std::string>("name"), s.get<std::string>("head_sha"),
          s.get<UnixSeconds>("first_seen_at"), s.get<UnixSeconds>("updated_at")};
}

CommitRecord read_commit(const Statement& s) {
  CommitRecord c;
  c.id = s.get<CommitId>("id");
  c.repo_id = s.get<RepoId>("repo_id");
  c.sha = s.get<std::string>("sha");
  c.parent_sha = s.get<std::string>("parent_sha");
  c.author = s.get<std::string>("author");
  c.email = s.get<std::string>("email");
  c.committed_at = s.get<UnixSeconds>("committed_at");
  c.subject = s.get<std::string>("subject");
  c.message = s.get<std::string>("message");
  c.paths_hash = s.get<std::string>("paths_hash");
  c.inherited_from = s.get<std::optional<CommitId>>("inherited_from");
  c.perf_hypothesis = s.get<std::string>("perf_hypothesis");
  c.perf_experiment = s.get<std::string>("perf_experiment");
  c.recorded_at = s.get<UnixSeconds>("recorded_at");
  return c;
}

BuildRecord read_build(const Statement& s) {
  BuildRecord b;
  b.id = s.get<BuildId>("id");
  b.commit_id = s.get<CommitId>("commit_id");
  b.status = read_enum(s, "status", parse_build_status);
  b.command = s.get<std::string>("command");
  b.exit_code = s.get<std::optional<int>>("exit_code");
  b.duration_s = s.get<double>("duration_s");
  b.log_tail = s.get<std::string>("log_tail");
  b.log_path = s.get<std::string>("log_path");
  b.toolchain = s.get<std::string>("toolchain");
  b.started_at = s.get<UnixSeconds>("started_at");
  b.finished_at = s.get<std::optional<UnixSeconds>>("finished_at");
  return b;
}

TestbedRecord read_testbed(const Statement& s) {
  TestbedRecord t;
  t.id = s.get<TestbedId>("id");
  t.name = s.get<std::string>("name");
  t.hostname = s.get<std::string>("hostname");
  t.backend = read_enum(s, "backend", parse_backend);
  t.device_name = s.get<std::string>("device_name");
  t.created_at = s.get<UnixSeconds>("created_at");
  return t;
}

RunRecord read_run(const Statement& s) {
  RunRecord r;
  r.id = s.get<RunId>("id");
  r.commit_id = s.get<CommitId>("commit_id");
  r.build_id = s.get<std::optional<BuildId>>("build_id");
  r.testbed_id = s.get<std::optional<TestbedId>>("testbed_id");
  r.job_id = s.get<std::optional<JobId>>("job_id");
  r.kind = read_enum(s, "kind", parse_run_kind);
  r.purpose = s.get<std::string>("purpose");
  r.status = read_enum(s, "status", parse_run_status);
  r.exit_code = s.get<std::optional<int>>("exit_code");
  r.signal = s.get<std::optional<int>>("signal");
  r.message = s.get<std::string>("message");
  r.stdout_tail = s.get<std::string>("stdout_tail");
  r.stderr_tail = s.get<std::string>("stderr_tail");
  r.log_path = s.get<std::string>("log_path");
  r.started_at = s.get<UnixSeconds>("started_at");
  r.finished_at = s.get<std::optional<UnixSeconds>>("finished_at");
  r.wall_s = s.get<std::optional<double>>("wall_s");
  r.seed = s.get<std::optional<std::int64_t>>("seed");
  r.provenance = s.get<nlohmann::json>("provenance_json");
  r.manifest = s.get<nlohmann::json>("manifest_json");
  r.trial_count = s.get<std::int64_t>("trial_count");
  r.placement = s.get<nlohmann::json>("placement_json");
  r.device_uuid = s.get<std::string>("device_uuid");
  return r;
}

VariantRecord read_variant(const Statement& s) {
  VariantRecord v;
  v.id = s.get<VariantId>("id");
  v.run_id = s.get<RunId>("run_id");
  v.name = s.get<std::string>("name");
  v.params = s.get<nlohmann::json>("params_json");
  v.is_baseline = s.get<bool>("is_baseline");
  v.status = read_enum(s, "status", parse_variant_status);
  v.reason = s.get<std::string>("reason");
  v.resources = s.get<nlohmann::json>("resources_json");
  return v;
}

PointRecord read_point(const Statement& s) {
  PointRecord p;
  p.id = s.get<PointId>("id");
  p.key = s.get<std::string>("key");
  p.label = s.get<std::string>("label");
  // Parsed as ordered JSON: the axes in the order the manifest declared them.
  const auto text = s.get<std::string>("axes_json");
  p.axes = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!p.axes.is_object()) raise(ErrorCode::kInternal, "column axes_json: not a JSON object");
  return p;
}

CheckRecord read_check(const Statement& s) {
  CheckRecord c;
  c.run_id = s.get<RunId>("run_id");
  c.variant_id = s.get<VariantId>("variant_id");
  c.point_id = s.get<PointId>("point_id");
  c.status = read_enum(s, "status", parse_check_status);
  c.reason = s.get<std::string>("reason");
  c.rel_l2_o = s.get<std::optional<double>>("rel_l2_o");
  c.max_abs_lse = s.get<std::optional<double>>("max_abs_lse");
  c.detail = s.get<nlohmann::json>("detail_json");
  return c;
}

TrialRecord read_trial(const Statement& s) {
  TrialRecord t;
  t.run_id = s.get<RunId>("run_id");
  t.variant_id = s.get<VariantId>("variant_id");
  t.point_id = s.get<PointId>("point_id");
  t.trial_no = s.get<int>("trial_no");
  const auto metrics = s.get<nlohmann::json>("metrics_json");
  if (!metrics.is_object()) raise(ErrorCode::kInternal, "column metrics_json: not a JSON object");
  for (const auto& [name, value] : metrics.items()) {
    if (!value.is_number()) raise(ErrorCode::kInternal, "column metrics_json: " + name + " is not a number");
    t.metrics[name] = value.get<double>();
  }
  t.steps = s.get<std::optional<std::int64_t>>("steps");
  t.sm_clock_mhz = s.get<std::optional<double>>("sm_clock_mhz");
  t.throttled = s.get<bool>("throttled");
  return t;
}

SummaryRecord read_summary(const Statement& s) {
  SummaryRecord r;
  r.run_id = s.get<RunId>("run_id");
  r.variant_id = s.get<VariantId>("variant_id");
  r.point_id = s.get<PointId>("point_id");
  r.metric = s.get<std::string>("metric");
  r.judged = s.get<bool>("judged");
  r.n = s.get<std::int64_t>("n");
  r.median = s.get<std::optional<double>>("median");
  r.ci_low = s.get<std::optional<double>>("ci_low");
  r.ci_high = s.get<std::optional<double>>("ci_high");
  r.mean = s.get<std::optional<double>>("mean");
  r.stddev = s.get<std::optional<double>>("stddev");
  r.minimum = s.get<std::optional<double>>("minimum");
  r.maximum = s.get<std::optional<double>>("maximum");
  r.dropped_throttled = s.get<std::int64_t>("dropped_throttled");
  r.stop_reason = s.get<std::string>("stop_reason");
  r.computed_at = s.get<UnixSeconds>("computed_at");
  return r;
}

CommitSummaryRecord read_commit_summary(const Statement& s) {
  CommitSummaryRecord r;
  r.commit_id = s.get<CommitId>("commit_id");
  r.testbed_id = s.get<TestbedId>("testbed_id");
  r.variant = s.get<std::string>("variant");
  r.point_id = s.get<PointId>("point_id");
  r.metric = s.get<std::string>("metric");
  r.runs = s.get<std::int64_t>("runs");
  r.geomean_of_run_medians = s.get<double>("geomean_of_run_medians");
  r.ci_low = s.get<std::optional<double>>("ci_low");
  r.ci_high = s.get<std::optional<double>>("ci_high");
  r.updated_at = s.get<UnixSeconds>("updated_at");
  return r;
}

NoiseBandRecord read_noise_band(const Statement& s) {
  NoiseBandRecord b;
  b.testbed_id = s.get<TestbedId>("testbed_id");
  b.variant = s.get<std::string>("variant");
  b.point_id = s.get<PointId>("point_id");
  b.band_rel = s.get<double>("band_rel");
  b.method = s.get<std::string>("method");
  b.k_runs = s.get<std::int64_t>("k_runs");
  b.calibrated = s.get<bool>("calibrated");
  b.source = read_enum(s, "source", parse_noise_source);
  b.updated_at = s.get<UnixSeconds>("updated_at");
  return b;
}

namespace {

// A nullable 0/1 column.
std::optional<bool> optional_bool(const Statement& s, std::string_view column) {
  auto v = s.get<std::optional<std::int64_t>>(column);
  if (!v) return std::nullopt;
  return *v != 0;
}

}  // namespace

ComparisonRecord read_comparison(const Statement& s) {
  ComparisonRecord c;
  c.id = s.get<ComparisonId>("id");
  c.commit_id = s.get<CommitId>("commit_id");
  c.against_commit_id = s.get<CommitId>("against_commit_id");
  c.basis = read_enum(s, "basis", parse_comparison_basis);
  c.testbed_id = s.get<TestbedId>("testbed_id");
  c.variant = s.get<std::string>("variant");
  c.point_id = s.get<PointId>("point_id");
  c.metric = s.get<std::string>("metric");
  c.ratio = s.get<std::optional<double>>("ratio");
  c.ci_low = s.get<std::optional<double>>("ci_low");
  c.ci_high = s.get<std::optional<double>>("ci_high");
  c.p_value = s.get<std::optional<double>>("p_value");
  c.band_rel = s.get<std::optional<double>>("band_rel");
  c.band_calibrated = optional_bool(s, "band_calibrated");
  c.runs = s.get<std::int64_t>("runs");
  c.against_runs = s.get<std::int64_t>("against_runs");
  c.verdict = read_enum(s, "verdict", parse_change_verdict);
  c.updated_at = s.get<UnixSeconds>("updated_at");
  return c;
}

FlagRecord read_flag(const Statement& s) {
  FlagRecord f;
  f.id = s.get<FlagId>("id");
  f.commit_id = s.get<CommitId>("commit_id");
  f.testbed_id = s.get<TestbedId>("testbed_id");
  f.variant = s.get<std::string>("variant");
  f.point_id = s.get<PointId>("point_id");
  f.kind = read_enum(s, "kind", parse_flag_kind);
  f.magnitude_rel = s.get<double>("magnitude_rel");
  f.comparison_id = s.get<std::optional<ComparisonId>>("comparison_id");
  f.detail = s.get<nlohmann::json>("detail_json");
  f.created_at = s.get<UnixSeconds>("created_at");
  if (auto at = s.get<std::optional<UnixSeconds>>("ack_at"))
    f.acknowledged = Acknowledgement{s.get<std::string>("ack_reason"),
                                     s.get<std::optional<std::string>>("ack_by").value_or(""), *at};
  if (auto at = s.get<std::optional<UnixSeconds>>("withdrawn_at"))
    f.withdrawn = Withdrawal{s.get<std::string>("withdrawn_reason"), *at};
  return f;
}

ExperimentRecord read_experiment(const Statement& s) {
  ExperimentRecord e;
  e.id = s.get<ExperimentId>("id");
  e.ident = s.get<std::optional<std::string>>("ident").value_or("");
  e.repo_id = s.get<std::optional<RepoId>>("repo_id");
  e.hypothesis = s.get<std::string>("hypothesis");
  e.source = read_enum(s, "source", parse_experiment_source);
  e.group_key = s.get<std::string>("group_key");
  e.metric = s.get<std::string>("metric");
  e.testbed_id = s.get<std::optional<TestbedId>>("testbed_id");
  e.baseline = s.get<nlohmann::json>("baseline_json");
  e.candidates = s.get<nlohmann::json>("candidates_json");
  e.verdict = read_enum(s, "verdict", parse_experiment_verdict);
  e.conclusion = s.get<std::string>("conclusion");
  e.created_at = s.get<UnixSeconds>("created_at");
  e.updated_at = s.get<UnixSeconds>("updated_at");
  return e;
}

EvidenceRecord read_evidence(const Statement& s) {
  EvidenceRecord e;
  e.experiment_id = s.get<ExperimentId>("experiment_id");
  e.candidate = s.get<std::string>("candidate");
  e.point_id = s.get<PointId>("point_id");
  e.baseline_value = s.get<std::optional<double>>("baseline_value");
  e.candidate_value = s.get<std::optional<double>>("candidate_value");
  e.delta_rel = s.get<std::optional<double>>("delta_rel");
  e.band_rel = s.get<std::optional<double>>("band_rel");
  e.band_calibrated = optional_bool(s, "band_calibrated");
  e.p_value = s.get<std::optional<double>>("p_value");
  e.runs = s.get<std::int64_t>("runs");
  e.verdict = read_enum(s, "verdict", parse_change_verdict);
  return e;
}

AnnotationRecord read_annotation(const Statement& s) {
  AnnotationRecord a;
  a.id = s.get<AnnotationId>("id");
  a.commit_id = s.get<std::optional<CommitId>>("commit_id");
  a.run_id = s.get<std::optional<RunId>>("run_id");
  a.text = s.get<std::string>("text");
  a.author = s.get<std::string>("author");
  a.at = s.get<UnixSeconds>("at");
  return a;
}

JobRecord read_job(const Statement& s) {
  JobRecord j;
  j.id = s.get<JobId>("id");
  j.repo_id = s.get<RepoId>("repo_id");
  j.commit_sha = s.get<std::string>("commit_sha");
  j.branch = s.get<std::string>("branch");
  j.kind = read_enum(s, "kind", parse_job_kind);
  j.state = read_enum(s, "state", parse_job_state);
  j.attempts = s.get<std::int64_t>("attempts");
  j.priority = s.get<std::int64_t>("priority");
  j.options = s.get<nlohmann::json>("options_json");
  j.retry_of = s.get<std::optional<JobId>>("retry_of");
  j.enqueued_at = s.get<UnixSeconds>("enqueued_at");
  j.started_at = s.get<std::optional<UnixSeconds>>("started_at");
  j.finished_at = s.get<std::optional<UnixSeconds>>("finished_at");
  j.message = s.get<std::string>("message");
  j.stops = s.get<std::int64_t>("stops");
  j.testbed = s.get<std::string>("testbed");
  return j;
}

}  // namespace perfwatch::store::detail
