// Turning a change point into a flag on a commit. E-Divisive finds that a
// point's history stepped near some index; which commit did it is decided by
// comparisons, re-opened with more runs (confirmation_runs()). A flag thus
// always carries a comparison (ratio, CI, p, band), and a change point that
// the extra runs do not confirm is not flagged.
//
// The daemon, after each commit, for each variant x point (stateless: the
// runs in the store are the state):
//   1. series = per-commit geometric means of run medians (the trailing
//      window of the history); cps = find_change_points(series);
//   2. for each cp, reopen = commits_to_reopen(cps, i, runs, comparisons),
//      with comparisons[k] = compare_runs(runs[k-1], runs[k], band now);
//      drop the commits whose comparison cannot grow any more (k and k - 1
//      both at max_runs_confirm runs); if any are left and
//      keep_persistent() keeps the cp, then for each commit k in order: grow
//      k and its predecessor with confirmation_runs() until the comparison
//      is decided or the budget is reached; stop at the first k flagged.
// benchmarks/detection_sim.cpp (run_perfwatch) is this procedure in code.
// A change point keeps being re-examined while it is unexplained, at no GPU
// cost once its candidates are at budget; as the history grows its location
// sharpens and a new candidate may get runs.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "analysis/change_points.h"
#include "analysis/compare.h"

namespace perfwatch::analysis {

struct FollowUpPolicy {
  int window = 2;          // candidates: commits index - window .. index + window
  int max_candidates = 2;  // re-open at most this many of them
};

// change_points: all change points of the history (sorted, as
// find_change_points returns them); which: the one to follow up.
// run_medians[k]: commit k's run medians (> 0); comparisons[k]: the current
// comparison of commit k with commit k - 1 ([0] is ignored); both cover the
// same history as the change points.
//
// Returns the commits whose comparison to re-open, most likely first.
// Likelihood: for each candidate k, the t statistic of a step at k between
// the segment around the change point split at k -- all log run medians of
// commits from the previous change point (or the start) up to k - 1 against
// those from k up to the next change point (or the end), in the change's
// direction. That is the maximum-likelihood location of a single step in
// the segment given every run, which places a step more exactly than
// E-Divisive's index on per-commit values. Returns nothing when a
// comparison in the window is already a regression or improvement in the
// change's direction: the change point is explained by a flag.
std::vector<int> commits_to_reopen(std::span<const ChangePoint> change_points, std::size_t which,
                                   std::span<const std::vector<double>> run_medians,
                                   std::span<const Comparison> comparisons,
                                   const FollowUpPolicy& policy = {});

}  // namespace perfwatch::analysis
