#include "analysis/change_points.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/random.h"

namespace perfwatch::analysis {
namespace {

// Levels with 1% lognormal noise from a fixed seed.
std::vector<double> series(const std::vector<std::pair<int, double>>& levels, std::uint64_t seed,
                           double noise = 0.01) {
  SeededRng rng(seed);
  std::vector<double> v;
  for (auto [count, level] : levels) {
    for (int i = 0; i < count; ++i) v.push_back(level * std::exp(noise * rng.normal()));
  }
  return v;
}

TEST(ChangePoints, FindsOneStepAtItsIndex) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const std::vector<double> v = series({{30, 100}, {30, 105}}, seed);
    const std::vector<ChangePoint> cps = find_change_points(v);
    ASSERT_EQ(cps.size(), 1u) << "seed " << seed;
    EXPECT_EQ(cps[0].index, 30) << "seed " << seed;
    EXPECT_LE(cps[0].p_value, 0.01);
    EXPECT_NEAR(cps[0].mean_before, 100, 1);
    EXPECT_NEAR(cps[0].mean_after, 105, 1);
    EXPECT_NEAR(cps[0].rel_change(), 0.05, 0.01);
  }
}

TEST(ChangePoints, FindsTwoStepsUpThenDown) {
  const std::vector<double> v = series({{20, 100}, {25, 108}, {15, 100}}, 7);
  const std::vector<ChangePoint> cps = find_change_points(v);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 20);
  EXPECT_EQ(cps[1].index, 45);
  EXPECT_GT(cps[0].rel_change(), 0.05);
  EXPECT_LT(cps[1].rel_change(), -0.05);
}

TEST(ChangePoints, StepNearTheStartNeedsOnlyMinSegment) {
  const std::vector<double> v = series({{3, 100}, {40, 110}}, 3);
  const std::vector<ChangePoint> cps = find_change_points(v);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 3);
}

// A single commit 30% off, in the middle and at the very end: not a step.
TEST(ChangePoints, OneCommitBlipIsNotAStep) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::vector<double> v = series({{60, 100}}, seed);
    v[30] = 130;
    EXPECT_TRUE(find_change_points(v).empty()) << "seed " << seed;
    std::vector<double> w = series({{60, 100}}, seed);
    w.back() = 130;
    EXPECT_TRUE(find_change_points(w).empty()) << "seed " << seed;
  }
}

TEST(ChangePoints, NoiseAloneIsRarelyAStep) {
  int with_change = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    ChangePointOptions o;
    o.seed = seed;
    with_change += !find_change_points(series({{60, 100}}, 1000 + seed), o).empty();
  }
  // The test's level is 1%; allow for the binomial spread of 200 tries.
  EXPECT_LE(with_change, 7);
}

TEST(ChangePoints, DeterministicForASeed) {
  const std::vector<double> v = series({{25, 100}, {25, 102.5}}, 11);
  ChangePointOptions o;
  o.seed = 42;
  const auto first = find_change_points(v, o);
  const auto second = find_change_points(v, o);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].index, second[i].index);
    EXPECT_EQ(first[i].p_value, second[i].p_value);
    EXPECT_EQ(first[i].statistic, second[i].statistic);
  }
}

TEST(ChangePoints, ShortOrFlatHistoriesHaveNone) {
  EXPECT_TRUE(find_change_points(std::vector<double>{}).empty());
  EXPECT_TRUE(find_change_points(std::vector<double>{1, 2, 3, 4, 5}).empty());
  EXPECT_TRUE(find_change_points(std::vector<double>(40, 7.0)).empty());
}

TEST(ChangePoints, MaxChangePointsLimitsTheSearch) {
  const std::vector<double> v = series({{20, 100}, {20, 110}, {20, 100}}, 5);
  ChangePointOptions o;
  o.max_change_points = 1;
  EXPECT_EQ(find_change_points(v, o).size(), 1u);
}

// keep_persistent keeps a candidate only if the history without its newest
// value has a change point within one index of it.
TEST(ChangePoints, PersistentNeedsTheStepWithoutTheNewestCommitToo) {
  const std::vector<double> v = series({{30, 100}, {10, 106}}, 9);
  const std::vector<ChangePoint> found = find_change_points(v);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(persistent_change_points(v).size(), 1u);
  ChangePoint made_up;  // no step near index 10
  made_up.index = 10;
  const std::vector<ChangePoint> candidates = {made_up, found[0]};
  const std::vector<ChangePoint> kept = keep_persistent(v, candidates);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].index, 30);
  // A flat history: nothing to keep, whatever the candidates.
  const std::vector<double> flat = series({{40, 100}}, 9);
  EXPECT_TRUE(keep_persistent(flat, candidates).empty());
}

TEST(ChangePoints, ThousandCommitHistory) {
  const std::vector<double> v = series({{300, 100}, {320, 105}, {380, 99}}, 13, 0.0175);
  const std::vector<ChangePoint> cps = find_change_points(v);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_NEAR(cps[0].index, 300, 2);
  EXPECT_NEAR(cps[1].index, 620, 2);
}

}  // namespace
}  // namespace perfwatch::analysis
