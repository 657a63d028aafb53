// Per-point summary of the trials of one variant at one point inside one run
// (one bench process): the median with a distribution-free 95% confidence
// interval, plus the usual descriptive statistics.
//
// The interval is [x(k), x(n+1-k)] on the sorted trials, with k the largest
// rank for which P(k <= B <= n-k) >= 0.95, B ~ Binomial(n, 1/2): the median
// lies between two order statistics with that probability whatever the
// trials' distribution (only independence is assumed). Because ranks are
// discrete, the real coverage is at least 95% and is reported in `confidence`
// (n = 10: [x(2), x(9)], 97.85%; n = 20: [x(6), x(15)], 95.86%;
// n = 50: [x(18), x(33)], 96.72%).
//
// Small n: with n < 6 no pair of order statistics reaches 95% (the widest,
// [min, max], covers 1 - 2^(1-n): 93.75% at n = 5, 87.5% at n = 4, 75% at
// n = 3, 50% at n = 2, 0% at n = 1). summarize() then returns [min, max] and
// says its real coverage in `confidence`; callers must not read it as 95%.
// The stopping rule never declares convergence before min_trials (default 5).
#pragma once

#include <span>
#include <utility>

namespace perfwatch::analysis {

struct Summary {
  int n = 0;
  double median = 0, ci_low = 0, ci_high = 0;  // 95% CI of the median
  double mean = 0, stddev = 0, min = 0, max = 0;  // stddev: sample (n - 1); 0 when n == 1
  double confidence = 0.95;  // the interval's real coverage (see above)

  // (ci_high - ci_low) / 2 / |median|. +infinity when the median is 0 and
  // the interval is not a single value; 0 when the interval is a single value.
  double rel_ci_halfwidth() const;
};

// REQUIRES: !values.empty(), every value finite.
Summary summarize(std::span<const double> values);

// The 1-based ranks (k, n + 1 - k) of the order statistics that bound the
// median's interval for n values at the requested coverage, and the real
// coverage they achieve. With n too small for `level`, the ranks are (1, n)
// and the coverage is what [min, max] achieves.
// REQUIRES: n >= 1, 0 < level < 1.
struct MedianCiRanks {
  int lower = 1, upper = 1;  // 1-based ranks into the sorted values
  double coverage = 0;
};
MedianCiRanks median_ci_ranks(int n, double level = 0.95);

}  // namespace perfwatch::analysis
