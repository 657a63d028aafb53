// Inside store/ only: the columns of each record and how a row becomes one.
//
// Each k*Columns list selects a table under a fixed alias (commits c, runs r,
// ...) with every column named by AS, so a query reads
//   "SELECT " + kRunColumns + " FROM runs r WHERE ..."
// and read_run() finds every column by its name.
#pragma once

#include "store/detail/statement.h"
#include "store/records.h"

namespace perfwatch::store::detail {

inline constexpr const char* kRepoColumns =
    "rp.id AS id, rp.path AS path, rp.url AS url, rp.name AS name, rp.created_at AS created_at";
inline constexpr const char* kBranchColumns =
    "b.repo_id AS repo_id, b.name AS name, b.head_sha AS head_sha, b.first_seen_at AS first_seen_at, "
    "b.updated_at AS updated_at";
inline constexpr const char* kCommitColumns =
    "c.id AS id, c.repo_id AS repo_id, c.sha AS sha, c.parent_sha AS parent_sha, c.author AS author, "
    "c.email AS email, c.committed_at AS committed_at, c.subject AS subject, c.message AS message, "
    "c.paths_hash AS paths_hash, c.inherited_from AS inherited_from, c.perf_hypothesis AS perf_hypothesis, "
    "c.perf_experiment AS perf_experiment, c.recorded_at AS recorded_at";
inline constexpr const char* kBuildColumns =
    "bd.id AS id, bd.commit_id AS commit_id, bd.status AS status, bd.command AS command, bd.exit_code AS exit_code, "
    "bd.duration_s AS duration_s, bd.log_tail AS log_tail, bd.log_path AS log_path, bd.toolchain AS toolchain, "
    "bd.started_at AS started_at, bd.finished_at AS finished_at";
inline constexpr const char* kTestbedColumns =
    "tb.id AS id, tb.name AS name, tb.hostname AS hostname, tb.backend AS backend, tb.device_name AS device_name, "
    "tb.created_at AS created_at";
inline constexpr const char* kRunColumns =
    "r.id AS id, r.commit_id AS commit_id, r.build_id AS build_id, r.testbed_id AS testbed_id, r.job_id AS job_id, "
    "r.kind AS kind, r.purpose AS purpose, r.status AS status, r.exit_code AS exit_code, r.signal AS signal, "
    "r.message AS message, r.stdout_tail AS stdout_tail, r.stderr_tail AS stderr_tail, r.log_path AS log_path, "
    "r.started_at AS started_at, r.finished_at AS finished_at, r.wall_s AS wall_s, r.seed AS seed, "
    "r.provenance_json AS provenance_json, r.manifest_json AS manifest_json, r.trial_count AS trial_count, "
    "r.placement_json AS placement_json, r.device_uuid AS device_uuid";
inline constexpr const char* kVariantColumns =
    "v.id AS id, v.run_id AS run_id, v.name AS name, v.params_json AS params_json, v.is_baseline AS is_baseline, "
    "v.status AS status, v.reason AS reason, v.resources_json AS resources_json";
inline constexpr const char* kPointColumns =
    "p.id AS id, p.key AS key, p.label AS label, p.axes_json AS axes_json";
inline constexpr const char* kCheckColumns =
    "ck.run_id AS run_id, ck.variant_id AS variant_id, ck.point_id AS point_id, ck.status AS status, "
    "ck.reason AS reason, ck.rel_l2_o AS rel_l2_o, ck.max_abs_lse AS max_abs_lse, ck.detail_json AS detail_json";
inline constexpr const char* kTrialColumns =
    "t.run_id AS run_id, t.variant_id AS variant_id, t.point_id AS point_id, t.trial_no AS trial_no, "
    "t.metrics_json AS metrics_json, t.steps AS steps, t.sm_clock_mhz AS sm_clock_mhz, t.throttled AS throttled";
inline constexpr const char* kSummaryColumns =
    "s.run_id AS run_id, s.variant_id AS variant_id, s.point_id AS point_id, s.metric AS metric, s.judged AS judged, s.n AS n, "
    "s.median AS median, s.ci_low AS ci_low, s.ci_high AS ci_high, s.mean AS mean, s.stddev AS stddev, "
    "s.minimum AS minimum, s.maximum AS maximum, s.dropped_throttled AS dropped_throttled, "
    "s.stop_reason AS stop_reason, s.computed_at AS computed_at";
inline constexpr const char* kCommitSummaryColumns =
    "cs.commit_id AS commit_id, cs.testbed_id AS testbed_id, cs.variant AS variant, cs.point_id AS point_id, "
    "cs.metric AS metric, cs.runs AS runs, cs.geomean_of_run_medians AS geomean_of_run_medians, cs.ci_low AS ci_low, cs.ci_high AS ci_high, "
    "cs.updated_at AS updated_at";
inline constexpr const char* kNoiseBandColumns =
    "nb.testbed_id AS testbed_id, nb.variant AS variant, nb.point_id AS point_id, nb.band_rel AS band_rel, "
    "nb.method AS method, nb.k_runs AS k_runs, nb.calibrated AS calibrated, nb.source AS source, "
    "nb.updated_at AS updated_at";
inline constexpr const char* kComparisonColumns =
    "cmp.id AS id, cmp.commit_id AS commit_id, cmp.against_commit_id AS against_commit_id, cmp.basis AS basis, "
    "cmp.testbed_id AS testbed_id, cmp.variant AS variant, cmp.point_id AS point_id, cmp.metric AS metric, "
    "cmp.ratio AS ratio, cmp.ci_low AS ci_low, cmp.ci_high AS ci_high, cmp.p_value AS p_value, "
    "cmp.band_rel AS band_rel, cmp.band_calibrated AS band_calibrated, cmp.runs AS runs, "
    "cmp.against_runs AS against_runs, cmp.verdict AS verdict, "
    "cmp.updated_at AS updated_at";
inline constexpr const char* kFlagColumns =
    "f.id AS id, f.commit_id AS commit_id, f.testbed_id AS testbed_id, f.variant AS variant, f.point_id AS point_id, "
    "f.kind AS kind, f.magnitude_rel AS magnitude_rel, f.comparison_id AS comparison_id, "
    "f.detail_json AS detail_json, f.created_at AS created_at, f.ack_reason AS ack_reason, f.ack_by AS ack_by, "
    "f.ack_at AS ack_at, f.withdrawn_reason AS withdrawn_reason, f.withdrawn_at AS withdrawn_at";
inline constexpr const char* kExperimentColumns =
    "e.id AS id, e.ident AS ident, e.repo_id AS repo_id, e.hypothesis AS hypothesis, e.source AS source, "
    "e.group_key AS group_key, e.metric AS metric, e.testbed_id AS testbed_id, e.baseline_json AS baseline_json, "
    "e.candidates_json AS candidates_json, e.verdict AS verdict, e.conclusion AS conclusion, "
    "e.created_at AS created_at, e.updated_at AS updated_at";
inline constexpr const char* kEvidenceColumns =
    "ev.experiment_id AS experiment_id, ev.candidate AS candidate, ev.point_id AS point_id, "
    "ev.baseline_value AS baseline_value, ev.candidate_value AS candidate_value, ev.delta_rel AS delta_rel, "
    "ev.band_rel AS band_rel, ev.band_calibrated AS band_calibrated, ev.p_value AS p_value, ev.runs AS runs, "
    "ev.verdict AS verdict";
inline constexpr const char* kAnnotationColumns =
    "a.id AS id, a.commit_id AS commit_id, a.run_id AS run_id, a.text AS text, a.author AS author, a.at AS at";
inline constexpr const char* kJobColumns =
    "j.id AS id, j.repo_id AS repo_id, j.commit_sha AS commit_sha, j.branch AS branch, j.kind AS kind, "
    "j.state AS state, j.attempts AS attempts, j.priority AS priority, j.options_json AS options_json, "
    "j.retry_of AS retry_of, j.enqueued_at AS enqueued_at, j.started_at AS started_at, "
    "j.finished_at AS finished_at, j.message AS message, j.stops AS stops, j.testbed AS testbed";

RepoRecord read_repo(const Statement& s);
BranchRecord read_branch(const Statement& s);
CommitRecord read_commit(const Statement& s);
BuildRecord read_build(const Statement& s);
TestbedRecord read_testbed(const Statement& s);
RunRecord read_run(const Statement& s);
VariantRecord read_variant(const Statement& s);
PointRecord read_point(const Statement& s);
CheckRecord read_check(const Statement& s);
TrialRecord read_trial(const Statement& s);
SummaryRecord read_summary(const Statement& s);
CommitSummaryRecord read_commit_summary(const Statement& s);
NoiseBandRecord read_noise_band(const Statement& s);
ComparisonRecord read_comparison(const Statement& s);
FlagRecord read_flag(const Statement& s);
ExperimentRecord read_experiment(const Statement& s);  // without refs
EvidenceRecord read_evidence(const Statement& s);
AnnotationRecord read_annotation(const Statement& s);
JobRecord read_job(const Statement& s);  // without run ids

// An enumeration column: the stored word parsed, or a Failure naming it.
template <class E>
E read_enum(const Statement& s, std::string_view column, std::optional<E> (*parse)(std::string_view)) {
  auto word = s.get<std::string>(column);
  auto v = parse(word);
  if (!v) raise(ErrorCode::kInternal, "column " + std::string(column) + ": unknown value '" + word + "'");
  return *v;
}

}  // namespace perfwatch::store::detail
