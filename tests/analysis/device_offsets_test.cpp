#include "analysis/device_offsets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace perfwatch::analysis {
namespace {

// `runs_per_gpu` runs on each of `gpus` GPUs of 12 cells, 0.5% run-to-run
// noise; GPU `slow` (if any) `factor` times slower.
std::vector<DeviceRun> table(int gpus, int runs_per_gpu, int slow, double factor, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> run_noise(0, 0.005), cell_noise(0, 0.001);
  std::vector<DeviceRun> out;
  for (int r = 0; r < runs_per_gpu; ++r) {
    for (int g = 0; g < gpus; ++g) {
      DeviceRun run{"GPU-" + std::to_string(g), {}};
      const double offset = std::exp(run_noise(rng)) * (g == slow ? factor : 1.0);
      for (int c = 0; c < 12; ++c) run.values.push_back((10.0 + c) * offset * std::exp(cell_noise(rng)));
      out.push_back(std::move(run));
    }
  }
  return out;
}

TEST(DeviceOffsets, ASlowCardIsFoundAndSized) {
  auto offsets = device_offsets(table(4, 3, 2, 1.03, 1));
  ASSERT_EQ(offsets.size(), 4u);
  for (const auto& d : offsets) {
    EXPECT_EQ(d.runs, 3);
    EXPECT_EQ(d.off, d.device == "GPU-2") << d.device << " " << d.offset_rel << " p " << d.p_value;
  }
  EXPECT_NEAR(offsets[2].offset_rel, 0.03, 0.01);
}

TEST(DeviceOffsets, LikeCardsAreNotFlagged) {
  int flagged = 0;
  for (unsigned seed = 1; seed <= 50; ++seed)
    for (const auto& d : device_offsets(table(4, 3, -1, 1.0, seed))) flagged += d.off;
  // alpha 0.01 over 200 like GPUs: about 2 by chance, and the size rule removes most.
  EXPECT_LE(flagged, 4);
}

TEST(DeviceOffsets, OneRunPerGpuCannotTellAndOneGpuIsNothingToCompare) {
  for (const auto& d : device_offsets(table(8, 1, 3, 1.05, 7))) {
    EXPECT_FALSE(d.off);
    EXPECT_EQ(d.p_value, 1);
  }
  EXPECT_TRUE(device_offsets(table(1, 5, -1, 1.0, 3)).empty());
}

TEST(DeviceOffsets, MissingCellsAreSkipped) {
  auto runs = table(3, 3, 1, 1.05, 11);
  for (auto& r : runs) r.values[0] = std::nan("");
  auto offsets = device_offsets(runs);
  ASSERT_EQ(offsets.size(), 3u);
  EXPECT_TRUE(offsets[1].off);
  EXPECT_NEAR(offsets[1].offset_rel, 0.05, 0.01);
}

TEST(DeviceOffsets, OfTwoGpusThatDifferNeitherIsSingledOut) {
  auto offsets = device_offsets(table(2, 4, 1, 1.05, 5));
  ASSERT_EQ(offsets.size(), 2u);
  EXPECT_FALSE(offsets[0].off);
  EXPECT_FALSE(offsets[1].off);
  EXPECT_NEAR(offsets[1].offset_rel, 0.05, 0.01);  // still reported
  EXPECT_LT(offsets[1].p_value, 0.001);
}

}  // namespace
}  // namespace perfwatch::analysis
