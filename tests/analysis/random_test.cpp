#include "analysis/random.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

// SplitMix64's published first outputs for seed 0 (Vigna's reference code).
TEST(SeededRng, MatchesSplitMix64Reference) {
  SeededRng rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
}

TEST(SeededRng, BoundedIntegersAreUniform) {
  SeededRng rng(1);
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) ++counts[rng.below(6)];
  for (int c : counts) EXPECT_NEAR(c, n / 6, 5 * std::sqrt(n / 6.0));  // 5 sigma
}

TEST(SeededRng, NormalHasUnitVariance) {
  SeededRng rng(2);
  double sum = 0, sum_sq = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double z = rng.normal();
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0, 0.02);
  EXPECT_NEAR(sum_sq / n, 1, 0.02);
}

TEST(SeededRng, SameSeedSameStream) {
  SeededRng a(99), b(99);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next(), b.next());
}

}  // namespace
}  // namespace perfwatch::analysis
