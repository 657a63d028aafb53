// Trials the bench marked as throttled (the GPU lowered its clocks during
// the trial) measure the cooling, not the kernel: they are dropped before a
// point is summarised or the stopping rule is asked, and the count is kept so
// the record says how many were dropped.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "analysis/summary.h"

namespace perfwatch::analysis {

struct TrialValue {
  double value = 0;  // the metric, e.g. time_us
  bool throttled = false;
};

struct UnthrottledTrials {
  std::vector<double> values;  // the kept trials, in their order
  int dropped = 0;             // trials marked throttled
};
UnthrottledTrials drop_throttled(std::span<const TrialValue> trials);

struct UnthrottledSummary {
  std::optional<Summary> summary;  // empty when every trial was throttled (or there were none)
  int kept = 0;
  int dropped = 0;
};
// drop_throttled() then summarize() on what is left.
UnthrottledSummary summarize_unthrottled(std::span<const TrialValue> trials);

}  // namespace perfwatch::analysis
