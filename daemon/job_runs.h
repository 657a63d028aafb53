// The bench processes of one job: each run of a commit goes through the env
// (building first when its build slot does not hold the build), shows its
// progress on the job, logs its build and run lines, and adds its time to
// what the job cost. With several executor slots (executor.h) a batch of
// runs spreads over them, one process a slot, in parallel.
#pragma once

#include <functional>
#include <optional>
#include <map>
#include <set>
#include <string>

#include "common/result.h"
#include "daemon/bench_commit.h"
#include "daemon/context.h"
#include "daemon/workbench.h"
#include "judge/run_plan.h"
#include "runner/manifest.h"
#include "store/job_progress_store.h"
#include "store/records.h"

namespace perfwatch::daemon {

struct RunAsk {
  std::string sha;
  store::RunKind kind = store::RunKind::kBench;
  Workbench::Lease lease;
  std::string purpose;                 // "run 2 of 3 of 3f2a9c1e05"
  std::set<std::string> only_points;   // point keys; empty: the whole sweep
  store::JobProgress detail;           // run x of y, for the job's live progress
};

class JobRuns {
 public:
  // `job_sha`: the commit the job is about (its progress names it).
  JobRuns(Context& ctx, const store::JobRecord& job, const runner::Manifest& manifest, std::string job_sha)
      : ctx_(ctx), job_(job), manifest_(manifest), job_sha_(std::move(job_sha)) {}

  // Errors are the store's; a failed build or bench is the outcome's status.
  // On the testbed's first slot. A run the executor lost (kLost: a Slurm
  // job preempted) is run again, up to the testbed's max_lost times.
  Result<BenchOutcome> run(RunAsk ask);

  // Runs every ask over the testbed's slots: in order, one at a time, with
  // one slot or where two commits' asks share a folder (each build there
  // undoes the other's, so a later ask whose folder another commit built
  // builds again); else one process a slot, in parallel, each through a
  // connection of its own to the store. Builds come first, one at a time: a
  // folder that does not hold its commit's build is built (on the first
  // slot: a Slurm job on the testbed's partition), then every run skips the
  // build; a failed build is the outcome of its folder's first ask, and the
  // other asks of that folder do not run. `skip` is asked
  // before each ask starts and `done` called after each ends, both under
  // one lock, so an outcome can stop later asks (a failed build of the
  // previous commit stops its re-runs). The first error (the store's, or
  // `done`'s) is returned once every started run has ended; no new run
  // starts after it.
  using Skip = std::function<bool(const RunAsk&)>;
  using Done = std::function<Status(const RunAsk&, const BenchOutcome&)>;
  Status run_all(std::vector<RunAsk> asks, const Skip& skip, const Done& done);

  // How many runs run_all can run at once.
  int slots() const { return static_cast<int>(ctx_.testbed.slots.size()); }

  // The job's live progress (best effort).
  void progress(store::JobProgress progress);

  double bench_s() const { return bench_s_; }

 private:
  Context& ctx_;
  const store::JobRecord& job_;
  const runner::Manifest& manifest_;
  std::string job_sha_;
  double bench_s_ = 0;

  // One run through `db` on `slot`, with its lost re-runs; `bench_s` gets its time.
  Result<BenchOutcome> run_on(store::Database& db, const Slot& slot, RunAsk ask, double& bench_s,
                              bool build_only = false);
  Result<BenchOutcome> run_once(store::Database& db, const Slot& slot, const RunAsk& ask, double& bench_s,
                                bool build_only = false);
};

// The ok bench runs of a commit; on `*testbed` when given, which the first
// such run sets when it is unset.
Result<int> ok_bench_runs(store::Database& db, store::CommitId commit,
                          std::optional<store::TestbedId>* testbed = nullptr);

// The store's testbed for the executor's `testbed` once a run on it has
// reported: the one of that name (slurm), or of that GPU model on this host
// (local-gpus with several models). nullopt for the unnamed testbed (its
// first run says which it is) or one that has not measured yet.
Result<std::optional<store::TestbedId>> known_testbed(store::Database& db, const ExecutorTestbed& testbed);

// The point keys of a side of the run plan; empty when that is every point
// of the manifest (a run of every point is the same as no restriction).
std::set<std::string> point_keys(store::Database& db, const runner::Manifest& manifest,
                                 const std::set<store::PointId>& points);
// For the log: "none", "all" or "2/6".
std::string describe_points(const runner::Manifest& manifest, const std::set<std::string>& points, int runs);

// What the run plan asks of this commit (`processes_b` bench processes so
// far) and the previous measured one, from how their comparison looks now:
// the previous side can grow only while its build is in a slot (or, for a
// confirmation, always). Errors are the store's.
Result<judge::RunPlan> plan_more_runs(Context& ctx, const runner::Manifest& manifest, store::TestbedId testbed,
                                      const store::CommitRecord& previous, store::CommitId commit, int processes_b,
                                      bool confirm, const std::map<judge::Cell, nlohmann::json>& confirm_cells);

// `step=more_runs`: what the run plan asked of both sides, and at which points.
void log_more_runs(Context& ctx, const runner::Manifest& manifest, const std::string& sha,
                   const std::string& against_sha, const judge::RunPlan& plan, const std::set<std::string>& points_a,
                   const std::set<std::string>& points_b);

// Why a run that did not end ok ended: "build failed: ..." or "run 12 crashed: ...".
std::string describe_failure(const BenchOutcome& out);

}  // namespace perfwatch::daemon
