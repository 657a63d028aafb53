#include "analysis/stopping.h"

#include <algorithm>

#include "analysis/summary.h"

namespace perfwatch::analysis {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kContinue: return "continue";
    case StopReason::kConverged: return "converged";
    case StopReason::kMaxTrials: return "max_trials";
    case StopReason::kBudget: return "budget";
  }
  return "unknown";
}

StopReason stopping_rule(std::span<const double> trials, const TrialPolicy& policy,
                         double elapsed_s) {
  const int n = static_cast<int>(trials.size());
  if (n >= std::max(1, policy.min_trials) &&
      summarize(trials).rel_ci_halfwidth() <= policy.target_rel_ci) {
    return StopReason::kConverged;
  }
  if (n >= policy.max_trials) return StopReason::kMaxTrials;
  if (elapsed_s >= policy.budget_s) return StopReason::kBudget;
  return StopReason::kContinue;
}

}  // namespace perfwatch::analysis
