#include "analysis/significance.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

// Mann & Whitney's worked example as SciPy's documentation reproduces it:
// U = 17, exact two-sided p = 14/126. By hand: the pooled ranks of x are
// 3, 5, 7, 8, 9 (sum 32), U = 32 - 15 = 17 = 20 - 3; the arrangements with
// U <= 3 number 1 + 1 + 2 + 3 = 7 of C(9, 4) = 126.
TEST(MannWhitney, TextbookExampleExact) {
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const MannWhitneyResult r = mann_whitney_u(males, females);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 17);
  EXPECT_NEAR(r.p_value, 14.0 / 126, 1e-12);
  const MannWhitneyResult swapped = mann_whitney_u(females, males);
  EXPECT_DOUBLE_EQ(swapped.u, 3);
  EXPECT_NEAR(swapped.p_value, 14.0 / 126, 1e-12);
}

// The printed critical value for n1 = n2 = 10 at two-sided alpha = 0.05 is
// U = 23: P(U <= 23) = 0.021629 (enumerating C(20, 10) subsets), so
// p(23) = 0.043257 and p(24) = 0.052426.
TEST(MannWhitney, ExactMatchesCriticalValueTable) {
  std::vector<double> y;
  for (int i = 1; i <= 10; ++i) y.push_back(i);
  // x_i = c_i + 0.5 has c_i values of y below it, so U = sum c_i.
  const std::vector<double> x23 = {0.5, 0.4, 0.3, 0.2, 1.5, 2.5, 3.5, 4.5, 5.5, 8.5};
  const std::vector<double> x24 = {0.5, 0.4, 0.3, 0.2, 1.5, 2.5, 3.5, 4.5, 5.5, 9.5};
  const MannWhitneyResult r23 = mann_whitney_u(x23, y);
  EXPECT_DOUBLE_EQ(r23.u, 23);
  EXPECT_NEAR(r23.p_value, 0.04325705254497824, 1e-12);
  const MannWhitneyResult r24 = mann_whitney_u(x24, y);
  EXPECT_DOUBLE_EQ(r24.u, 24);
  EXPECT_NEAR(r24.p_value, 0.05242590227110351, 1e-12);
}

// Three runs a side can never reach p < 0.05: the most extreme arrangement
// has p = 2 / C(6, 3) = 0.1. Four a side: 2 / C(8, 4) = 0.0286.
TEST(MannWhitney, SmallSamplesCannotReachFivePercent) {
  const std::vector<double> a = {1, 2, 3}, b = {4, 5, 6};
  EXPECT_NEAR(mann_whitney_u(a, b).p_value, 0.1, 1e-12);
  const std::vector<double> c = {1, 2, 3, 4}, d = {5, 6, 7, 8};
  EXPECT_NEAR(mann_whitney_u(c, d).p_value, 2.0 / 70, 1e-12);
}

// With ties: mid-ranks, tie-corrected variance, continuity correction.
// By hand: U = 16, var = 7*8/12 * (16 - 48/240) = 73.7333,
// z = (|16 - 28| - 0.5) / sqrt(73.7333) = 1.33926, p = 0.180485.
TEST(MannWhitney, NormalApproximationWithTies) {
  const std::vector<double> x = {1, 2, 2, 4, 6, 6, 7};
  const std::vector<double> y = {2, 3, 3, 5, 8, 9, 9, 10};
  const MannWhitneyResult r = mann_whitney_u(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 16);
  EXPECT_NEAR(r.z, -1.3392631101166599, 1e-9);
  EXPECT_NEAR(r.p_value, 0.18048503357727996, 1e-9);
}

TEST(MannWhitney, AllTiedIsNoEvidence) {
  const std::vector<double> x = {5, 5}, y = {5, 5, 5};
  EXPECT_EQ(mann_whitney_u(x, y).p_value, 1.0);
}

// By hand: means 3 and 7, variances 2.5 and 10, SE^2 = 0.5 + 2 = 2.5,
// t = 4 / 1.58114 = 2.52982, df = 6.25 / (0.25/4 + 4/4) = 5.88235.
TEST(WelchT, StatisticAndDegreesOfFreedom) {
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {3, 5, 7, 9, 11};
  const TTestResult r = welch_t_test(a, b);
  EXPECT_DOUBLE_EQ(r.difference, 4);
  EXPECT_NEAR(r.std_error, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(r.t, 2.5298221281347035, 1e-12);
  EXPECT_NEAR(r.df, 6.25 / 1.0625, 1e-12);
  EXPECT_GT(r.p_value, 0.02);  // t_{0.975, 6} = 2.447 < t < t_{0.99, 6} = 3.143
  EXPECT_LT(r.p_value, 0.05);
}

// t = 3 / (1.58114 / sqrt 5) = 4.24264 with 4 df. For 4 df the CDF has the
// closed form 1/2 + sin(th) (1 + cos^2(th) / 2) / 2, th = atan(t / 2), which
// gives p = 0.013236.
TEST(OneSampleT, MatchesClosedFormForFourDf) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const TTestResult r = one_sample_t_test(x);
  EXPECT_NEAR(r.t, 3 / (std::sqrt(2.5) / std::sqrt(5.0)), 1e-12);
  EXPECT_EQ(r.df, 4);
  const double th = std::atan(r.t / 2);
  const double p = 1 - std::sin(th) * (1 + std::cos(th) * std::cos(th) / 2);
  EXPECT_NEAR(r.p_value, p, 1e-12);
  EXPECT_NEAR(r.p_value, 0.013236, 1e-6);
  EXPECT_NEAR(r.ci_halfwidth(0.95), 2.776445 * std::sqrt(0.5), 1e-5);
}

// By hand: local sum of squares 0.0002 + 0.0002 with 2 df, prior 0.02^2 with
// 8 df: s^2 = (8 * 0.0004 + 0.0004) / 10 = 0.00036, SE = s * sqrt(1/2 + 1/2).
TEST(PooledT, PriorVarianceAddsDegreesOfFreedom) {
  const std::vector<double> a = {0.0, 0.02}, b = {0.05, 0.07};
  const TTestResult r = pooled_t_test(a, b, 0.02, 8);
  EXPECT_NEAR(r.difference, 0.05, 1e-15);
  EXPECT_EQ(r.df, 10);
  EXPECT_NEAR(r.std_error, std::sqrt(0.00036), 1e-12);
  EXPECT_NEAR(r.t, 0.05 / std::sqrt(0.00036), 1e-9);
  // Without a prior it is Student's pooled t with 2 df.
  const TTestResult plain = pooled_t_test(a, b);
  EXPECT_EQ(plain.df, 2);
  EXPECT_NEAR(plain.std_error, std::sqrt(0.0004 / 2), 1e-12);
  // One value a side is enough when the prior carries the variance.
  const std::vector<double> one_a = {0.0}, one_b = {0.05};
  const TTestResult single = pooled_t_test(one_a, one_b, 0.02, 8);
  EXPECT_EQ(single.df, 8);
  EXPECT_NEAR(single.std_error, 0.02 * std::sqrt(2.0), 1e-12);
}

TEST(TTests, ZeroSpreadGivesCertainty) {
  const std::vector<double> a = {1, 1, 1}, b = {2, 2, 2};
  const TTestResult r = welch_t_test(a, b);
  EXPECT_TRUE(std::isinf(r.t));
  EXPECT_EQ(r.p_value, 0);
  const TTestResult same = welch_t_test(a, a);
  EXPECT_EQ(same.t, 0);
  EXPECT_EQ(same.p_value, 1);
}

}  // namespace
}  // namespace perfwatch::analysis
