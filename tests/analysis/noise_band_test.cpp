#include "analysis/noise_band.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

std::vector<double> from_logs(std::initializer_list<double> logs) {
  std::vector<double> v;
  for (double l : logs) v.push_back(100 * std::exp(l));
  return v;
}

// Hand-made A/A data: log deviations +-0.03 around the mean in 10 runs:
// sum of squares 10 * 0.0009 = 0.009, 9 df, s = sqrt(0.001) = 0.0316228.
// Band for 3 vs 3 runs: t_{0.975, 9} * s * sqrt(2/3) = 2.262157 * 0.0316228 *
// 0.8164966 = 0.0584092 on the log scale, exp(.) - 1 = 6.015%.
TEST(NoiseBand, FromTenAARuns) {
  NoiseEvidence e;
  e.add_same_build(from_logs({0.03, -0.03, 0.03, -0.03, 0.03, -0.03, 0.03, -0.03, 0.03, -0.03}));
  EXPECT_EQ(e.df, 9);
  EXPECT_NEAR(e.sum_sq_log, 0.009, 1e-12);
  const NoiseBand band = noise_band(e);
  EXPECT_TRUE(band.calibrated);
  EXPECT_NEAR(band.sigma_log, std::sqrt(0.001), 1e-12);
  EXPECT_NEAR(band.quantile(), 2.262157, 1e-6);
  EXPECT_NEAR(band.log_halfwidth(3, 3), 0.0584092, 1e-6);
  EXPECT_NEAR(band.rel_halfwidth(), std::expm1(0.0584092), 1e-6);
  // More runs, a narrower band: 12 vs 12 is half of 3 vs 3.
  EXPECT_NEAR(band.log_halfwidth(12, 12), band.log_halfwidth(3, 3) / 2, 1e-12);
}

TEST(NoiseBand, NineRunsAreNotEnoughAndTheDefaultIsUsed) {
  NoiseEvidence e;
  e.add_same_build(from_logs({0.03, -0.03, 0.03, -0.03, 0.03, -0.03, 0.03, -0.03, 0.0}));
  EXPECT_EQ(e.df, 8);
  const NoiseBand band = noise_band(e);
  EXPECT_FALSE(band.calibrated);
  EXPECT_NEAR(band.rel_halfwidth(), 0.05, 1e-12);  // the manifest's default
  EXPECT_NEAR(band.log_halfwidth(3, 3), std::log(1.05), 1e-12);
  // The sigma the default implies: ln 1.05 / (1.959964 * sqrt(2/3)) = 2.99%.
  EXPECT_NEAR(band.sigma_log, std::log(1.05) / (1.959964 * std::sqrt(2.0 / 3)), 1e-6);
  BandPolicy wide;
  wide.default_rel = 0.07;
  EXPECT_NEAR(noise_band(e, wide).rel_halfwidth(), 0.07, 1e-12);
}

// Groups pool: logs {0, .02, -.02} (ss 0.0008, 2 df) and {.1, .13}
// (ss 0.00045, 1 df): s = sqrt(0.00125 / 3).
TEST(NoiseEvidence, PoolsGroupsOfOneBuild) {
  NoiseEvidence e;
  e.add_same_build(from_logs({0, 0.02, -0.02}));
  e.add_same_build(from_logs({0.1, 0.13}));
  e.add_same_build(from_logs({0.5}));  // one run: no evidence
  EXPECT_EQ(e.df, 3);
  EXPECT_NEAR(e.sigma_log(), std::sqrt(0.00125 / 3), 1e-12);
}

// History: two measurements of unchanged code, means differing by 0.03 on
// the log scale with 2 runs each: 0.03^2 / (1/2 + 1/2) with one df.
TEST(NoiseEvidence, UnchangedPairsAddTheirDifference) {
  NoiseEvidence e;
  e.add_unchanged_pair(from_logs({0, 0}), from_logs({0.03, 0.03}));
  EXPECT_EQ(e.df, 1);
  EXPECT_NEAR(e.sum_sq_log, 0.0009, 1e-12);
  NoiseEvidence more;
  more.add_same_build(from_logs({0.01, -0.01}));
  e.merge(more);
  EXPECT_EQ(e.df, 2);
  EXPECT_NEAR(e.sum_sq_log, 0.0009 + 0.0002, 1e-12);
}

TEST(NoiseBand, PairedBandScalesWithOneOverRootN) {
  NoiseEvidence e;
  e.sum_sq_log = 0.01 * 0.01 * 20;
  e.df = 20;
  const NoiseBand band = paired_noise_band(e);
  EXPECT_TRUE(band.paired);
  EXPECT_NEAR(band.log_halfwidth_paired(4), band.quantile() * 0.01 / 2, 1e-12);
  EXPECT_NEAR(band.rel_halfwidth(), std::expm1(band.quantile() * 0.01 / std::sqrt(3.0)), 1e-12);
  const NoiseBand fallback = paired_noise_band(NoiseEvidence{});
  EXPECT_NEAR(fallback.rel_halfwidth(), 0.05, 1e-12);
}

}  // namespace
}  // namespace perfwatch::analysis
