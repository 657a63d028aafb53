// The reads the dashboard and the daemon make over a branch's history. Each
// walks the branch's first-parent chain from its head with indexed lookups;
// none scans trials (summaries are read instead).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::store {

// Where a history starts: the head of `branch` (watch state), or head_sha.
struct ChainStart {
  RepoId repo_id = 0;
  std::string branch;    // used when head_sha is empty
  std::string head_sha;  // full sha
};

// A commit with what running it cost and how it went.
struct CommitOverview {
  CommitRecord commit;
  std::int64_t runs = 0;  // of its own (an inherited commit has none)
  std::map<RunStatus, std::int64_t> runs_by_status;
  std::optional<RunStatus> latest_run_status;
  std::int64_t trials = 0;
  double wall_s = 0;                         // bench wall time, all runs
  double build_s = 0;                        // build time, all builds
  std::optional<BuildStatus> latest_build_status;
  std::optional<JobState> latest_job_state;  // of its newest job
  std::int64_t open_regressions = 0;
  std::int64_t open_improvements = 0;
};

struct RunPoint {
  RunId run_id = 0;
  RunKind kind = RunKind::kBench;
  double median = 0;
  std::optional<double> ci_low;
  std::optional<double> ci_high;
  std::int64_t n = 0;
};

struct HistoryEntry {
  CommitId commit_id = 0;
  std::string sha;
  std::string subject;
  std::string author;
  UnixSeconds committed_at = 0;
  std::optional<CommitId> inherited_from;  // values shown are that commit's
  std::vector<RunPoint> runs;              // its ok runs' medians (of their trials), oldest first
  std::optional<CommitSummaryRecord> pooled;  // the stored geomean of run medians, once judged
  std::optional<FlagRecord> flag;          // the newest flag at this point, if any
  // The comparison that judged this commit at this point: the newest one
  // with its previous measured commit (basis previous), with the band and
  // the test it was judged by; none for an inherited or a first commit.
  std::optional<ComparisonRecord> comparison;
};

struct HistoryQuery {
  ChainStart start;
  std::string variant;
  std::string point_key;
  // The testbed whose runs to show; nullopt: the testbed of the newest ok
  // run of this variant x point on the chain (the result says which).
  std::optional<TestbedId> testbed_id;
  int limit = 1000;  // commits from the head
  // The metric whose run medians to read (any declared one); empty: the one
  // each run was judged by. A commit's pooled value is read only for the
  // metric it was pooled in.
  std::string metric;
  bool include_unmeasured = false;  // also commits with no runs and no pooled value
  std::vector<RunKind> kinds = {RunKind::kBench, RunKind::kBaselineRerun};
};

struct PointHistory {
  std::string variant;
  PointRecord point;
  std::optional<TestbedId> testbed_id;
  std::optional<NoiseBandRecord> band;  // nullopt: none stored (use the manifest's default)
  std::vector<HistoryEntry> entries;    // oldest first
};

struct StoreMetrics {
  std::map<JobState, std::int64_t> jobs_by_state;  // every state, zero included
  std::map<RunStatus, std::int64_t> runs_by_status;  // every status, zero included
  std::optional<UnixSeconds> last_run_finished_at;
  std::int64_t open_regressions = 0;
  std::int64_t experiments = 0;
};

class HistoryReader {
 public:
  explicit HistoryReader(Database& db) : db_(db) {}

  // The newest `limit` commits of the chain (skipping `offset`), newest first.
  // kNotFound for an unknown branch.
  Result<std::vector<CommitOverview>> commits(const ChainStart& start, int limit = 50, int offset = 0);

  // A point's history for a variant: per commit in first-parent order, the
  // run medians, the pooled value, the flag; with the point's band.
  // kNotFound for an unknown branch or point.
  Result<PointHistory> point_history(const HistoryQuery& query);

  // The commits of the chain, newest first (at most `limit`).
  Result<std::vector<CommitRecord>> chain(const ChainStart& start, int limit);

  // The nearest first-parent ancestor of `commit` that has ok runs of its own
  // of this kind on the testbed: what a new commit is compared against.
  Result<std::optional<CommitRecord>> previous_measured(CommitId commit, TestbedId testbed,
                                                        RunKind kind = RunKind::kBench);

  // The nearest first-parent descendants of `commit` (one per line of
  // descent) that have ok runs of their own of this kind on the testbed:
  // the commits whose previous_measured() is `commit`. Oldest first.
  Result<std::vector<CommitRecord>> next_measured(CommitId commit, TestbedId testbed,
                                                  RunKind kind = RunKind::kBench);

  Result<StoreMetrics> metrics();

 private:
  Database& db_;
};

}  // namespace perfwatch::store
