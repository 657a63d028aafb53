// One bench (or back-fill, or confirm) job of the queue: everything the
// daemon does for one commit, as a loop of named steps:
//
//   check     the commit still exists and is still on the branch (a
//             force-push may have dropped it): otherwise skipped, with why;
//   load      its manifest and its record;
//   inherit   a commit that changes none of the manifest's paths carries its
//             parent's results (no build, no bench);
//   pinned    the pinned baseline, when the manifest names one (measured
//             once here when it has too few runs of its own);
//   first     the build (in a persistent build slot) and runs.per_commit
//             runs, separate bench processes, each after a re-run of the
//             pinned baseline when runs.interleave_baseline is set; runs an
//             earlier, cut-off attempt finished count;
//   grow      while the comparison with the previous benchmarked commit is
//             undecided (a confirm job: until its cells are decided), the
//             run plan (judge/run_plan.h) says which side needs how many
//             runs at which points, within runs.max_per_commit bench
//             processes per commit, and they run A B A B;
//   judge     judge/judge_commit.h decides (comparisons, flags, drift, bands,
//             experiments, change points); notify.h announces what it
//             returned; change points to confirm become confirm jobs.
//
// The world outside (git, builds and benches, the clock) is reached only
// through ctx.env (env.h). A failed build or run ends the job as failed,
// with what happened; whatever was measured before it is kept and judged.
#pragma once

#include <string>

#include "common/result.h"
#include "daemon/context.h"
#include "store/records.h"

namespace perfwatch::daemon {

struct JobResult {
  // done, failed or skipped; running: interrupted by a stop request, left for
  // the next start to redo (it is cut off and queued again then).
  store::JobState state = store::JobState::kDone;
  std::string message;
  double bench_s = 0;   // in builds and bench processes
  double daemon_s = 0;  // everything else: the daemon's own work
};

// Errors are the daemon's own failures (the store); what goes wrong with
// the commit, its build or its bench is a JobResult.
Result<JobResult> run_commit_job(Context& ctx, const store::JobRecord& job);

}  // namespace perfwatch::daemon
