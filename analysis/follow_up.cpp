#include "analysis/follow_up.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace perfwatch::analysis {

std::vector<int> commits_to_reopen(std::span<const ChangePoint> change_points, std::size_t which,
                                   std::span<const std::vector<double>> run_medians,
                                   std::span<const Comparison> comparisons,
                                   const FollowUpPolicy& policy) {
  const ChangePoint& cp = change_points[which];
  const int commits = static_cast<int>(run_medians.size());
  const bool up = cp.mean_after > cp.mean_before;
  const int seg_begin = which == 0 ? 0 : change_points[which - 1].index;
  const int seg_end = which + 1 == change_points.size() ? commits : change_points[which + 1].index;
  const int from = std::max({1, seg_begin + 1, cp.index - policy.window});
  const int to = std::min(seg_end - 1, cp.index + policy.window);

  for (int k = from; k <= to; ++k) {
    const Comparison& c = comparisons[k];
    const bool flagged =
        c.verdict == ChangeVerdict::kRegression || c.verdict == ChangeVerdict::kImprovement;
    if (flagged && (c.ratio > 1) == up) return {};
  }
  // Prefix sums of log run medians and run counts over the segment.
  std::vector<double> sum(seg_end - seg_begin + 1, 0.0);
  std::vector<double> count(seg_end - seg_begin + 1, 0.0);
  for (int c = seg_begin; c < seg_end; ++c) {
    double s = 0;
    for (double v : run_medians[c]) s += std::log(v);
    sum[c - seg_begin + 1] = sum[c - seg_begin] + s;
    count[c - seg_begin + 1] = count[c - seg_begin] + run_medians[c].size();
  }
  const double total_sum = sum.back(), total_count = count.back();
  std::vector<std::pair<double, int>> scored;
  for (int k = from; k <= to; ++k) {
    const double n_left = count[k - seg_begin], n_right = total_count - n_left;
    if (n_left == 0 || n_right == 0) continue;
    const double left = sum[k - seg_begin] / n_left;
    const double right = (total_sum - sum[k - seg_begin]) / n_right;
    const double t = (up ? 1 : -1) * (right - left) / std::sqrt(1 / n_left + 1 / n_right);
    scored.emplace_back(-t, k);
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<int> out;
  for (int i = 0; i < std::min<int>(policy.max_candidates, scored.size()); ++i) {
    out.push_back(scored[i].second);
  }
  return out;
}

}  // namespace perfwatch::analysis
