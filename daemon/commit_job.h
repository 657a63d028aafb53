// One bench (or back-fill, or confirm) job of the queue: everything the
// daemon does for one commit.
//
//   1. The commit must still exist, and still be on the branch (a force-push
//      may have dropped it): otherwise the job is skipped, with the reason.
//   2. A commit that changes none of the manifest's paths inherits its
//      parent's results (no build, no bench), and its record says so.
//   3. Otherwise it is measured in runs.per_commit runs (separate bench
//      processes; one build, in a persistent build slot), interleaved with
//      re-runs of the pinned baseline's build when runs.interleave_baseline
//      is set. Runs that an earlier, cut-off attempt finished count; the run
//      that was cut off is redone.
//   4. It is compared with the previous benchmarked commit on the branch;
//      while a point is undecided both grow (A B A B) as analysis/compare.h's
//      more_runs() asks, up to runs.max_per_commit (the previous commit grows
//      only while its build is still in a slot).
//   5. Its pooled values, comparisons (and with the pinned baseline), flags,
//      noise evidence and bands, experiments (variant A/B; trailers) are
//      stored; a new regression goes to the webhook; change points over each
//      point's history may queue confirm jobs (change_watch.h).
// A confirm job (options.confirm) redoes step 4 for one point with
// confirmation_runs() and a larger budget, rebuilding the predecessor when
// needed, and flags a confirmed step as a change point.
// A failed build or a failed run ends the job as failed, with what happened;
// whatever was measured before it is kept and judged.
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
