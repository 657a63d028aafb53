// When to stop taking trials of one variant at one point inside one run.
//
// The runner calls stopping_rule() after every trial with all trials so far
// (unthrottled values only; see throttle.h) and the seconds spent on this
// variant x point. The rule, in order:
//   1. n >= min_trials and the median's CI (summary.h) has
//      rel_ci_halfwidth() <= target_rel_ci           -> kConverged
//   2. n >= max_trials                                 -> kMaxTrials
//   3. elapsed_s >= budget_s                           -> kBudget
//   4. otherwise                                       -> kContinue
// Convergence is never declared before min_trials (min_trials below 1 counts
// as 1), so the n < 6 intervals, which cover less than 95% (summary.h), can
// only end a point when the manifest asks for fewer than 6 trials; with the
// default min_trials = 5 that is [min, max] at 93.75%. max_trials and the
// budget are hard limits: they stop the point even before min_trials, and the
// summary then says how many trials it has. Convergence wins over the limits
// when both hold, because it is the more informative reason.
#pragma once

#include <span>

namespace perfwatch::analysis {

struct TrialPolicy {
  int min_trials = 5;
  int max_trials = 50;
  double target_rel_ci = 0.01;  // half-width of the median's 95% CI / median
  double budget_s = 30;         // wall time for one variant x point in one run
};

enum class StopReason { kContinue, kConverged, kMaxTrials, kBudget };

// "continue", "converged", "max_trials", "budget".
const char* to_string(StopReason reason);

// REQUIRES: every trial value finite.
StopReason stopping_rule(std::span<const double> trials, const TrialPolicy& policy,
                         double elapsed_s);

}  // namespace perfwatch::analysis
