#include "analysis/throttle.h"

namespace perfwatch::analysis {

UnthrottledTrials drop_throttled(std::span<const TrialValue> trials) {
  UnthrottledTrials out;
  out.values.reserve(trials.size());
  for (const TrialValue& t : trials) {
    if (t.throttled) {
      ++out.dropped;
    } else {
      out.values.push_back(t.value);
    }
  }
  return out;
}

UnthrottledSummary summarize_unthrottled(std::span<const TrialValue> trials) {
  UnthrottledTrials kept = drop_throttled(trials);
  UnthrottledSummary out;
  out.kept = static_cast<int>(kept.values.size());
  out.dropped = kept.dropped;
  if (!kept.values.empty()) out.summary = summarize(kept.values);
  return out;
}

}  // namespace perfwatch::analysis
