#include "analysis/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "analysis/distributions.h"

namespace perfwatch::analysis {

double Summary::rel_ci_halfwidth() const {
  const double half = (ci_high - ci_low) / 2.0;
  if (half == 0.0) return 0.0;
  if (median == 0.0) return std::numeric_limits<double>::infinity();
  return half / std::fabs(median);
}

MedianCiRanks median_ci_ranks(int n, double level) {
  // Coverage of [x(k), x(n+1-k)] is 1 - 2 P(B <= k - 1); it falls as k grows,
  // so binary-search the largest k in [1, n/2] that still reaches `level`.
  auto coverage = [n](int k) { return 1.0 - 2.0 * binomial_cdf(k - 1, n, 0.5); };
  int best = 1;
  int lo = 1, hi = std::max(1, n / 2);
  while (lo <= hi) {
    const int mid = lo + (hi - lo) / 2;
    if (coverage(mid) >= level) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return {best, n + 1 - best, std::max(0.0, coverage(best))};
}

Summary summarize(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const int n = static_cast<int>(sorted.size());
  Summary s;
  s.n = n;
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / n;
  if (n > 1) {
    double ss = 0;
    for (double v : sorted) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / (n - 1));
  }
  const MedianCiRanks ranks = median_ci_ranks(n);
  s.ci_low = sorted[ranks.lower - 1];
  s.ci_high = sorted[ranks.upper - 1];
  s.confidence = ranks.coverage;
  return s;
}

}  // namespace perfwatch::analysis
