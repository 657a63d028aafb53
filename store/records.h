// Plain records: what the store keeps, one struct per kind of row.
//
// Names are the users' words; units are in the names (time_us, wall_s,
// band_rel = a relative half-width, 0.05 = ±5%). Records carry no behaviour.
// An id of 0 means "not written yet"; the store fills ids and the *_at stamps
// it owns (recorded_at, created_at, updated_at, enqueued_at) from its clock.
// JSON fields are nlohmann::json values; the store keeps them as JSON text.
//
// Records compare equal field by field (operator==), JSON fields by value.
//
// Each enum has to_string() (the word stored in SQL and shown to users) and a
// parse_*() that returns nullopt for an unknown word.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "schemas/manifest_defaults.h"
#include "store/ids.h"

namespace perfwatch::store {

// ---------------------------------------------------------------- enums

enum class BuildStatus { kOk, kFailed, kTimeout };
enum class Backend { kCpu, kCuda };
enum class RunKind { kBench, kNoise, kBaselineRerun };  // "bench", "noise", "baseline-rerun"
enum class RunStatus {
  kRunning,        // started, not finished (or the process that ran it died: see JobQueue)
  kOk,
  kBuildFailed,
  kCrashed,        // the bench died on a signal or exited non-zero
  kTimeout,
  kProtocolError,  // the bench wrote a line that is not valid protocol
  kCutOff,         // the daemon was killed while the run was in progress
  kFailed,         // anything else that stopped it
  kStoreFailed,    // the store refused a write (disk full, I/O error): ended at once, the error in its message
  kLost,           // the executor lost the process (a Slurm job cancelled, preempted, timed out, its node
                   // failed): no verdict on the commit, not counted against the budget, re-queued
};
enum class VariantStatus { kOk, kInfeasible };
enum class CheckStatus { kOk, kIncorrect, kInfeasible, kUnknown };
enum class NoiseSource { kAa, kHistory, kDefault };  // "aa", "history", "default"
enum class ComparisonBasis { kPrevious, kPinned };
// A change at one point, judged against its band: the verdict of a comparison
// between commits and of one point of an experiment's evidence.
enum class ChangeVerdict { kRegression, kImprovement, kWithinNoise, kUndecided };
enum class FlagKind { kRegression, kImprovement, kChangepoint, kDrift };
// What was decided about an alert group (the flags of one commit x testbed):
// by a person (acknowledged, invalid, expected) or by judging (recovered: a
// later commit undid it; recovery: this commit undid an earlier group).
enum class GroupTriage { kAcknowledged, kInvalid, kExpected, kRecovered, kRecovery };
enum class ExperimentSource { kAuto, kTrailer, kManual };
enum class ExperimentVerdict { kAccepted, kRejected, kMixed, kNoEffect, kPending };
enum class JobKind { kBench, kNoise, kBackfill };
// kGaveUp: cut off max_attempts times (stops not counted) and not redone by
// itself: see JobQueue::recover_after_crash and JobQueue::requeue.
enum class JobState { kQueued, kRunning, kDone, kFailed, kCutOff, kSkipped, kGaveUp };

std::string_view to_string(BuildStatus v);
std::string_view to_string(Backend v);
std::string_view to_string(RunKind v);
std::string_view to_string(RunStatus v);
std::string_view to_string(VariantStatus v);
std::string_view to_string(CheckStatus v);
std::string_view to_string(NoiseSource v);
std::string_view to_string(ComparisonBasis v);
std::string_view to_string(ChangeVerdict v);
std::string_view to_string(FlagKind v);
std::string_view to_string(GroupTriage v);
std::string_view to_string(ExperimentSource v);
std::string_view to_string(ExperimentVerdict v);
std::string_view to_string(JobKind v);
std::string_view to_string(JobState v);

std::optional<BuildStatus> parse_build_status(std::string_view s);
std::optional<Backend> parse_backend(std::string_view s);
std::optional<RunKind> parse_run_kind(std::string_view s);
std::optional<RunStatus> parse_run_status(std::string_view s);
std::optional<VariantStatus> parse_variant_status(std::string_view s);
std::optional<CheckStatus> parse_check_status(std::string_view s);
std::optional<NoiseSource> parse_noise_source(std::string_view s);
std::optional<ComparisonBasis> parse_comparison_basis(std::string_view s);
std::optional<ChangeVerdict> parse_change_verdict(std::string_view s);
std::optional<FlagKind> parse_flag_kind(std::string_view s);
std::optional<GroupTriage> parse_group_triage(std::string_view s);
std::optional<ExperimentSource> parse_experiment_source(std::string_view s);
std::optional<ExperimentVerdict> parse_experiment_verdict(std::string_view s);
std::optional<JobKind> parse_job_kind(std::string_view s);
std::optional<JobState> parse_job_state(std::string_view s);

// ---------------------------------------------------------------- the repository

struct RepoRecord {
  RepoId id = 0;
  std::string path;  // the watched checkout; unique
  std::string url;   // may be empty
  std::string name;
  UnixSeconds created_at = 0;

  friend bool operator==(const RepoRecord&, const RepoRecord&) = default;
};

// A branch the watcher has seen, and the head it last acted on (watch state).
struct BranchRecord {
  RepoId repo_id = 0;
  std::string name;
  std::string head_sha;
  UnixSeconds first_seen_at = 0;
  UnixSeconds updated_at = 0;

  friend bool operator==(const BranchRecord&, const BranchRecord&) = default;
};

struct CommitRecord {
  CommitId id = 0;
  RepoId repo_id = 0;
  std::string sha;
  std::string parent_sha;  // first parent; empty for a root commit
  std::string author;
  std::string email;
  UnixSeconds committed_at = 0;
  std::string subject;
  std::string message;     // the full message
  std::string paths_hash;  // hash of the tree of the manifest's paths at this commit
  // Set when the commit touched none of the manifest's paths: the commit whose
  // results it carries (never itself inherited; the store resolves chains).
  std::optional<CommitId> inherited_from;
  std::string perf_hypothesis;  // "Perf-Hypothesis:" trailer, parsed by the caller
  std::string perf_experiment;  // "Perf-Experiment:" trailer (an experiment group key)
  UnixSeconds recorded_at = 0;

  friend bool operator==(const CommitRecord&, const CommitRecord&) = default;
};

struct BuildRecord {
  BuildId id = 0;
  CommitId commit_id = 0;
  BuildStatus status = BuildStatus::kOk;
  std::string command;
  std::optional<int> exit_code;
  double duration_s = 0;
  std::string log_tail;
  std::string log_path;   // the full log on disk
  std::string toolchain;  // e.g. "g++ 12.2.0; nvcc 12.4"
  UnixSeconds started_at = 0;
  std::optional<UnixSeconds> finished_at;

  friend bool operator==(const BuildRecord&, const BuildRecord&) = default;
};

// A machine + backend that measures. Noise bands are per testbed. Unique by name.
struct TestbedRecord {
  TestbedId id = 0;
  std::string name;
  std::string hostname;
  Backend backend = Backend::kCpu;
  std::string device_name;
  UnixSeconds created_at = 0;

  friend bool operator==(const TestbedRecord&, const TestbedRecord&) = default;
};

// One bench process (or the attempt at one). A commit benchmarked twice has two.
struct RunRecord {
  RunId id = 0;
  CommitId commit_id = 0;
  std::optional<BuildId> build_id;
  std::optional<TestbedId> testbed_id;  // unknown when the build failed before the bench ran
  std::optional<JobId> job_id;          // the queue job that made it, if any
  RunKind kind = RunKind::kBench;
  std::string purpose;                  // free text: "A/A noise calibration 3/5", ...
  RunStatus status = RunStatus::kRunning;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string message;
  std::string stdout_tail;
  std::string stderr_tail;
  std::string log_path;
  UnixSeconds started_at = 0;
  std::optional<UnixSeconds> finished_at;
  std::optional<double> wall_s;
  std::optional<std::int64_t> seed;
  // The bench header: device, driver, CUDA version, clocks, build id, binary
  // hash, plus the env vars the manifest names.
  nlohmann::json provenance = nlohmann::json::object();
  nlohmann::json manifest = nlohmann::json::object();  // the manifest used
  std::int64_t trial_count = 0;  // kept by the store: trials stored so far
  // Where the executor put the process: {"executor": "local-gpus", "gpu_index": 3,
  // "gpu_uuid": "GPU-...", "gpu_name": "NVIDIA H200"} or {"executor": "slurm",
  // "slurm_job_id": 41, "partition": "hopper", "node": "gpu07", ...}; {} for local.
  nlohmann::json placement = nlohmann::json::object();
  std::string device_uuid;  // the GPU's UUID when the executor knows it

  friend bool operator==(const RunRecord&, const RunRecord&) = default;
};

// How a run ended; RunWriter::finish_run stores it.
struct RunOutcome {
  RunStatus status = RunStatus::kOk;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string message;
  std::string stdout_tail;
  std::string stderr_tail;
  std::optional<double> wall_s;
  std::optional<UnixSeconds> finished_at;  // default: the store's clock

  friend bool operator==(const RunOutcome&, const RunOutcome&) = default;
};

// A variant as one run built and ran it.
struct VariantRecord {
  VariantId id = 0;
  RunId run_id = 0;
  std::string name;
  nlohmann::json params = nlohmann::json::object();  // {"block_t":64,"num_warps":4,...}
  bool is_baseline = false;  // at most one per run
  VariantStatus status = VariantStatus::kOk;
  std::string reason;        // why infeasible
  nlohmann::json resources = nlohmann::json::object();  // registers, shared memory, spills...

  friend bool operator==(const VariantRecord&, const VariantRecord&) = default;
};

// A sweep point, shared by every run: a value of each named axis. Unique by
// key, the axes in canonical form (runner::point_key: names sorted,
// "batch=96,dtype=bf16,heads=16"), so a point keeps its history
// when a manifest renames its label.
struct PointRecord {
  PointId id = 0;
  std::string key;
  std::string label;  // what people see ("C96"); a later run may rename it
  nlohmann::ordered_json axes = nlohmann::ordered_json::object();  // {"batch": 96, ...} in the manifest's order

  friend bool operator==(const PointRecord&, const PointRecord&) = default;
};

// A variant's output at a point against the float64 reference. One per run x
// variant x point; a later record for the same cell replaces the earlier one.
struct CheckRecord {
  RunId run_id = 0;
  VariantId variant_id = 0;
  PointId point_id = 0;
  CheckStatus status = CheckStatus::kOk;
  std::string reason;
  std::optional<double> rel_l2_o;
  std::optional<double> max_abs_lse;
  nlohmann::json detail = nlohmann::json::object();  // tolerance, launch, working set...

  friend bool operator==(const CheckRecord&, const CheckRecord&) = default;
};

// One timed batch of calls: the raw data, immutable once stored.
struct TrialRecord {
  RunId run_id = 0;
  VariantId variant_id = 0;
  PointId point_id = 0;
  int trial_no = 0;  // 1-based within run x variant x point
  // Every declared metric the bench reported for this trial, by name
  // ({"time_us": 41.2, "tokens_per_s": 1.9e6}); each value > 0.
  std::map<std::string, double> metrics;
  std::optional<std::int64_t> steps;   // calls timed in the batch; null when the bench does not say
  std::optional<double> sm_clock_mhz;  // null where it cannot be measured (the CPU)
  bool throttled = false;

  friend bool operator==(const TrialRecord&, const TrialRecord&) = default;
};

// Statistics of one run x variant x point x metric, computed by analysis/,
// in the units of `metric` (e.g. "time_us"). Every declared metric of a cell
// is summarised; `judged` marks the run's judged metric, the one judging and
// history read. Recomputing replaces it.
struct SummaryRecord {
  RunId run_id = 0;
  VariantId variant_id = 0;
  PointId point_id = 0;
  std::string metric;
  bool judged = true;
  std::int64_t n = 0;
  std::optional<double> median;
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  std::optional<double> mean;
  std::optional<double> stddev;
  std::optional<double> minimum;
  std::optional<double> maximum;
  std::int64_t dropped_throttled = 0;
  std::string stop_reason;  // "ci_reached", "max_trials", "time_budget", ...
  UnixSeconds computed_at = 0;

  friend bool operator==(const SummaryRecord&, const SummaryRecord&) = default;
};

// A commit's pooled value at a point: the geometric mean of its runs'
// medians (analysis::commit_value, the statistic commits are compared by;
// each run's median is the median of its trials), with the 95% CI of that
// geometric mean (a t interval on the log run medians; none under 2 runs).
struct CommitSummaryRecord {
  CommitId commit_id = 0;
  TestbedId testbed_id = 0;
  std::string variant;  // variant name
  PointId point_id = 0;
  std::string metric;
  std::int64_t runs = 0;
  double geomean_of_run_medians = 0;
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  UnixSeconds updated_at = 0;

  friend bool operator==(const CommitSummaryRecord&, const CommitSummaryRecord&) = default;
};

// The noise band of a point: relative half-width for the difference of two
// measurements of the same code. Unique by testbed x variant x point.
struct NoiseBandRecord {
  TestbedId testbed_id = 0;
  std::string variant;
  PointId point_id = 0;
  double band_rel = schemas::kDefaultBandRel;
  std::string method;  // how it was computed, with K
  std::int64_t k_runs = 0;
  bool calibrated = false;
  NoiseSource source = NoiseSource::kDefault;
  UnixSeconds updated_at = 0;

  friend bool operator==(const NoiseBandRecord&, const NoiseBandRecord&) = default;
};

// A commit against another (the previous benchmarked one on the branch, or a
// pinned baseline) at one point. Unique by commit x against x testbed x variant
// x point; recomputing (after more runs) updates it in place.
struct ComparisonRecord {
  ComparisonId id = 0;
  CommitId commit_id = 0;
  CommitId against_commit_id = 0;
  ComparisonBasis basis = ComparisonBasis::kPrevious;
  TestbedId testbed_id = 0;
  std::string variant;
  PointId point_id = 0;
  std::string metric;
  std::optional<double> ratio;  // commit / against
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  std::optional<double> p_value;
  std::optional<double> band_rel;
  // Whether that band was measured (true) or the manifest's default (false);
  // it also says the test (analysis/compare.h). nullopt: judged before
  // schema version 11.
  std::optional<bool> band_calibrated;
  std::int64_t runs = 0;          // runs of commit
  std::int64_t against_runs = 0;  // runs of against
  ChangeVerdict verdict = ChangeVerdict::kUndecided;
  UnixSeconds updated_at = 0;

  friend bool operator==(const ComparisonRecord&, const ComparisonRecord&) = default;
};

struct Acknowledgement {
  std::string reason;
  std::string by;
  UnixSeconds at = 0;

  friend bool operator==(const Acknowledgement&, const Acknowledgement&) = default;
};

// Judging took a flag back: the re-judged comparison no longer supports it.
struct Withdrawal {
  std::string reason;
  UnixSeconds at = 0;

  friend bool operator==(const Withdrawal&, const Withdrawal&) = default;
};

// A change worth a human's look. Unique by commit x testbed x variant x point x kind.
struct FlagRecord {
  FlagId id = 0;
  CommitId commit_id = 0;
  TestbedId testbed_id = 0;
  std::string variant;
  PointId point_id = 0;
  FlagKind kind = FlagKind::kRegression;
  double magnitude_rel = 0;  // signed relative change of the metric, -0.12 = -12%
  std::optional<ComparisonId> comparison_id;
  nlohmann::json detail = nlohmann::json::object();
  UnixSeconds created_at = 0;
  std::optional<Acknowledgement> acknowledged;
  std::optional<Withdrawal> withdrawn;

  bool standing() const { return !withdrawn; }
  friend bool operator==(const FlagRecord&, const FlagRecord&) = default;
};

// The triage of an alert group: the flags of one commit on one testbed.
// Unique by commit x testbed; triaging again replaces it.
struct GroupTriageRecord {
  CommitId commit_id = 0;
  TestbedId testbed_id = 0;
  GroupTriage triage = GroupTriage::kAcknowledged;
  std::string reason;  // never empty
  std::string by;
  UnixSeconds at = 0;
  // kRecovered: the commit that undid the group; kRecovery: the commit whose
  // group this one undid; nullopt otherwise.
  std::optional<CommitId> linked_commit_id;

  friend bool operator==(const GroupTriageRecord&, const GroupTriageRecord&) = default;
};

// A commit or run an experiment is about.
struct ExperimentRef {
  std::optional<CommitId> commit_id;
  std::optional<RunId> run_id;
  std::string role;  // "baseline", "candidate", ...

  friend bool operator==(const ExperimentRef&, const ExperimentRef&) = default;
};

struct ExperimentRecord {
  ExperimentId id = 0;
  // The creator's stable identity ("auto:<repo>:<sha>:<variant>"): creating an
  // experiment with an ident that exists updates that experiment. May be empty.
  std::string ident;
  std::optional<RepoId> repo_id;
  std::string hypothesis;
  ExperimentSource source = ExperimentSource::kManual;
  std::string group_key;  // the Perf-Experiment id that groups commits
  std::string metric;
  std::optional<TestbedId> testbed_id;
  nlohmann::json baseline = nlohmann::json::object();   // {"variant":..,"params":..} or {"commit":sha}
  nlohmann::json candidates = nlohmann::json::array();  // [{"name":..,"params":{..}} | {"commit":sha}]
  ExperimentVerdict verdict = ExperimentVerdict::kPending;
  std::string conclusion;
  UnixSeconds created_at = 0;
  UnixSeconds updated_at = 0;
  std::vector<ExperimentRef> refs;  // filled by reads

  friend bool operator==(const ExperimentRecord&, const ExperimentRecord&) = default;
};

// One point of an experiment's evidence table.
struct EvidenceRecord {
  ExperimentId experiment_id = 0;
  std::string candidate;  // the candidate's name (or commit sha)
  PointId point_id = 0;
  std::optional<double> baseline_value;
  std::optional<double> candidate_value;
  std::optional<double> delta_rel;  // candidate / baseline - 1
  std::optional<double> band_rel;
  std::optional<bool> band_calibrated;  // as ComparisonRecord's
  std::optional<double> p_value;
  std::int64_t runs = 0;
  ChangeVerdict verdict = ChangeVerdict::kUndecided;

  friend bool operator==(const EvidenceRecord&, const EvidenceRecord&) = default;
};

// A note on a commit or a run (at least one of them).
struct AnnotationRecord {
  AnnotationId id = 0;
  std::optional<CommitId> commit_id;
  std::optional<RunId> run_id;
  std::string text;
  std::string author;
  UnixSeconds at = 0;

  friend bool operator==(const AnnotationRecord&, const AnnotationRecord&) = default;
};

// One item of the daemon's queue.
struct JobRecord {
  JobId id = 0;
  RepoId repo_id = 0;
  std::string commit_sha;
  std::string branch;
  JobKind kind = JobKind::kBench;
  JobState state = JobState::kQueued;
  std::int64_t attempts = 0;  // times claimed, carried over to a re-queued job
  // Of those, the times a stop request (SIGTERM) interrupted it: not counted
  // against max_attempts. Carried over too.
  std::int64_t stops = 0;
  std::int64_t priority = 0;  // higher is claimed first; ties in enqueue order
  nlohmann::json options = nlohmann::json::object();  // e.g. {"runs": 5}
  std::string testbed;  // the executor's testbed it measures on; empty: the daemon's only one
  std::optional<JobId> retry_of;  // the cut-off (or given-up, re-queued by hand) job this one redoes
  UnixSeconds enqueued_at = 0;
  std::optional<UnixSeconds> started_at;
  std::optional<UnixSeconds> finished_at;
  std::string message;
  std::vector<RunId> run_ids;  // runs it produced; filled by reads

  friend bool operator==(const JobRecord&, const JobRecord&) = default;
};

}  // namespace perfwatch::store
