#include "analysis/summary.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

// Ranks and coverages from binomial tables of the sign test / median CI
// (e.g. Conover, Practical Nonparametric Statistics, table A3):
// n = 10 -> (2, 9) 97.85%; n = 20 -> (6, 15) 95.86%; n = 50 -> (18, 33) 96.72%.
TEST(MedianCiRanks, MatchBinomialTables) {
  auto r10 = median_ci_ranks(10);
  EXPECT_EQ(r10.lower, 2);
  EXPECT_EQ(r10.upper, 9);
  EXPECT_NEAR(r10.coverage, 1 - 2 * 11.0 / 1024, 1e-12);
  auto r20 = median_ci_ranks(20);
  EXPECT_EQ(r20.lower, 6);
  EXPECT_EQ(r20.upper, 15);
  EXPECT_NEAR(r20.coverage, 0.9586, 1e-4);
  auto r50 = median_ci_ranks(50);
  EXPECT_EQ(r50.lower, 18);
  EXPECT_EQ(r50.upper, 33);
  EXPECT_NEAR(r50.coverage, 0.9672, 1e-4);
  // n = 6 is the first n with a 95% interval: [min, max] at 1 - 2/64.
  auto r6 = median_ci_ranks(6);
  EXPECT_EQ(r6.lower, 1);
  EXPECT_EQ(r6.upper, 6);
  EXPECT_NEAR(r6.coverage, 0.96875, 1e-12);
  // Large n stays near the normal approximation n/2 -/+ 0.98 sqrt(n).
  auto r1000 = median_ci_ranks(1000);
  EXPECT_NEAR(r1000.lower, 1000 / 2.0 - 0.98 * std::sqrt(1000.0), 2);
  EXPECT_GE(r1000.coverage, 0.95);
}

TEST(MedianCiRanks, SmallNReturnsMinMaxWithItsRealCoverage) {
  const double expected[] = {0, 0.5, 0.75, 0.875, 0.9375};
  for (int n = 1; n <= 5; ++n) {
    auto r = median_ci_ranks(n);
    EXPECT_EQ(r.lower, 1) << n;
    EXPECT_EQ(r.upper, n) << n;
    EXPECT_NEAR(r.coverage, expected[n - 1], 1e-12) << n;
  }
}

TEST(Summarize, DescriptiveStatistics) {
  const std::vector<double> v = {5, 1, 4, 2, 3, 10, 6, 8, 7, 9};
  Summary s = summarize(v);
  EXPECT_EQ(s.n, 10);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_NEAR(s.stddev, 3.0276503540974917, 1e-12);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_EQ(s.ci_low, 2);   // x(2)
  EXPECT_EQ(s.ci_high, 9);  // x(9)
  EXPECT_NEAR(s.confidence, 0.9785, 1e-4);
  EXPECT_NEAR(s.rel_ci_halfwidth(), 3.5 / 5.5, 1e-12);
}

TEST(Summarize, OddCountAndSingleValue) {
  const std::vector<double> v = {3, 1, 2};
  Summary s = summarize(v);
  EXPECT_EQ(s.median, 2);
  EXPECT_EQ(s.ci_low, 1);
  EXPECT_EQ(s.ci_high, 3);
  EXPECT_NEAR(s.confidence, 0.75, 1e-12);

  const std::vector<double> one = {4.5};
  Summary t = summarize(one);
  EXPECT_EQ(t.n, 1);
  EXPECT_EQ(t.median, 4.5);
  EXPECT_EQ(t.stddev, 0);
  EXPECT_NEAR(t.confidence, 0, 1e-12);
  EXPECT_EQ(t.rel_ci_halfwidth(), 0);
}

TEST(Summarize, ZeroMedianWithSpreadIsInfinitelyLoose) {
  const std::vector<double> v = {-1, 0, 1};
  EXPECT_TRUE(std::isinf(summarize(v).rel_ci_halfwidth()));
}

}  // namespace
}  // namespace perfwatch::analysis
