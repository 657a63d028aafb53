// Significance tests: Welch's t, one-sample t, a t-test whose variance is
// pooled with a prior noise estimate (the noise band's), and Mann-Whitney U.
// All two-sided. Inputs are plain samples; callers take logs where the
// comparison is on a ratio (compare.h, experiment.h do).
//
// Why the run is the unit: trials of one run share that process's clocks,
// placement and thermal state, so they are not independent draws of the
// commit's performance. A test over the pooled trials of one run per commit
// counts each run's offset as if it were the commits' difference: with 3%
// run-to-run and 1% trial noise, Mann-Whitney over 2 x 10 pooled trials sees
// a run offset of ~4% against a ~1% trial spread and calls it significant
// (p < 0.05) for about 800 of 1000 unchanged comparisons
// (benchmarks/detection_sim.md). The tests here are meant for one value per
// run (run medians).
#pragma once

#include <span>

namespace perfwatch::analysis {

struct TTestResult {
  double difference = 0;  // mean(b) - mean(a), or mean(x) - mu0 for one sample
  double std_error = 0;   // of `difference`
  double df = 0;          // degrees of freedom (real for Welch)
  double t = 0;           // difference / std_error (+-inf when std_error == 0 and difference != 0; 0 when both are 0)
  double p_value = 1;     // two-sided
  // Half-width of the (level) confidence interval of `difference`.
  double ci_halfwidth(double level = 0.95) const;
};

// Welch's unequal-variance t-test of mean(b) - mean(a), Welch-Satterthwaite df.
// REQUIRES: a.size() >= 2, b.size() >= 2.
TTestResult welch_t_test(std::span<const double> a, std::span<const double> b);

// One-sample t-test of mean(x) - mu0. With prior_df > 0 the variance is
// pooled with a prior estimate exactly as in pooled_t_test (df = prior_df +
// n - 1), which is how paired variant A/B uses a calibrated ratio band.
// REQUIRES: x.size() >= 2, or x.size() >= 1 with prior_df > 0.
TTestResult one_sample_t_test(std::span<const double> x, double mu0 = 0, double prior_sd = 0,
                              double prior_df = 0);

// Two-sample t-test of mean(b) - mean(a) whose variance pools the samples'
// own (equal-variance) estimate, with a.size() + b.size() - 2 df, with a
// prior estimate prior_sd carrying prior_df degrees of freedom (a "moderated"
// t, Smyth 2004): s^2 = (prior_df * prior_sd^2 + local_df * local_var) /
// (prior_df + local_df), df = prior_df + local_df. With prior_df == 0 it is
// Student's pooled t. When the prior comes from A/A runs of the same testbed
// (the noise band) and the noise does not depend on the code, the statistic
// is exactly t-distributed, and with R = 3 runs a side it has the power of
// ~prior_df extra degrees of freedom instead of 4.
// REQUIRES: a.size() >= 1, b.size() >= 1, a.size() + b.size() >= 3 unless
// prior_df > 0; prior_sd >= 0, prior_df >= 0.
TTestResult pooled_t_test(std::span<const double> a, std::span<const double> b,
                          double prior_sd = 0, double prior_df = 0);

struct MannWhitneyResult {
  double u = 0;        // U of sample x: #{(i, j): x_i > y_j} + 0.5 #{x_i == y_j}
  double z = 0;        // normal-approximation statistic (0 when exact)
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (no ties, n_x + n_y <= 50)
};

// Mann-Whitney U (Wilcoxon rank-sum) test, two-sided. Exact p from the null
// distribution of U when there are no ties and n_x + n_y <= 50 (counts stay
// exact in doubles up to C(50, 25)); otherwise the normal approximation with
// the tie-corrected variance and a continuity correction of 1/2.
// Small samples: the smallest exact two-sided p is 2 / C(n_x + n_y, n_x):
// 0.1 for 3 vs 3, 0.0286 for 4 vs 4 -- a rank test on 3 runs a side can
// never reach p < 0.05, which is why commits are compared with t-tests on
// log run medians (compare.h).
// REQUIRES: !x.empty(), !y.empty().
MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y);

}  // namespace perfwatch::analysis
