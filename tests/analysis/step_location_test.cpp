#include "analysis/step_location.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

// Run-to-run sigma 1% (log), well measured.
NoiseBand one_percent() {
  NoiseEvidence e;
  e.sum_sq_log = 0.01 * 0.01 * 100;
  e.df = 100;
  return noise_band(e);
}

// Commits of `runs` runs each at these levels, with a fixed +-1% pattern of
// run noise (the same in every commit, so a test's answer is exact).
std::vector<std::vector<double>> commits(const std::vector<double>& levels, int runs = 4) {
  const double pattern[] = {1.01, 0.99, 1.005, 0.995, 1.0, 1.008, 0.992, 1.0};
  std::vector<std::vector<double>> out;
  for (double level : levels) {
    std::vector<double> r;
    for (int i = 0; i < runs; ++i) r.push_back(level * pattern[i % 8]);
    out.push_back(r);
  }
  return out;
}

TEST(LocateStep, AStepIsPlacedAtItsCommitOnEveryRunBeforeAndAfter) {
  const auto runs = commits({100, 100, 100, 100, 100, 104, 104, 104, 104});
  auto split = locate_step(runs, one_percent(), Direction::kLowerIsBetter, {});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->index, 5);
  EXPECT_EQ(split->comparison.verdict, ChangeVerdict::kRegression);
  EXPECT_NEAR(split->comparison.ratio, 1.04, 1e-3);
  EXPECT_EQ(split->comparison.runs_a, 20);
  EXPECT_EQ(split->comparison.runs_b, 16);
  EXPECT_EQ(split->candidates, 9 - 3 - 1 + 1);  // min_before 3, min_after 1
  EXPECT_GT(split->location_margin, 10);          // 4 runs at 4% / 1% noise: clear
  EXPECT_GT(split->slide_margin, 2);              // a flat "after" is no slide
}

TEST(LocateStep, ThroughputSaysImprovementForTheSameRise) {
  const auto runs = commits({100, 100, 100, 100, 104, 104, 104});
  auto split = locate_step(runs, one_percent(), Direction::kHigherIsBetter, {});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->comparison.verdict, ChangeVerdict::kImprovement);
}

TEST(LocateStep, ASlideIsExplainedBetterByASlideThanByAStep) {
  std::vector<double> levels(5, 100.0);
  for (int i = 1; i <= 10; ++i) levels.push_back(100 * std::pow(1.006, i));
  auto split = locate_step(commits(levels), one_percent(), Direction::kLowerIsBetter, {});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->comparison.verdict, ChangeVerdict::kRegression);  // the level moved ...
  EXPECT_LT(split->slide_margin, -2);                               // ... but no one commit did it
}

TEST(LocateStep, AStepAtTheNewestCommitCannotYetBeToldFromASlide) {
  const auto runs = commits({100, 100, 100, 100, 100, 106});
  auto split = locate_step(runs, one_percent(), Direction::kLowerIsBetter, {});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->index, 5);
  EXPECT_NEAR(split->slide_margin, 0, 1e-6);  // a slide steep at the last commit fits as well
}

TEST(LocateStep, AFlatStretchSaysNoChangeAndAlphaIsSharedByTheSplitsTried) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.01);
  int changes = 0;
  for (int t = 0; t < 300; ++t) {
    std::vector<std::vector<double>> runs(20);
    for (auto& c : runs)
      for (int i = 0; i < 4; ++i) c.push_back(100 * std::exp(noise(rng)));
    auto split = locate_step(runs, one_percent(), Direction::kLowerIsBetter, {});
    ASSERT_TRUE(split.has_value());
    const auto v = split->comparison.verdict;
    changes += v == ChangeVerdict::kRegression || v == ChangeVerdict::kImprovement;
  }
  // The best of 17 splits at alpha 0.001 / 17: a change in well under 1% of flat stretches.
  EXPECT_LE(changes, 1);
}

TEST(LocateStep, AStepCommitWithFewRunsHalfWayIsNotClearlyPlaced) {
  auto runs = commits({100, 100, 100, 100, 100, 104, 104, 104, 104}, 8);
  runs[5] = {102, 102.2};  // two runs, half way between the levels
  auto split = locate_step(runs, one_percent(), Direction::kLowerIsBetter, {});
  ASSERT_TRUE(split.has_value());
  EXPECT_TRUE(split->index == 5 || split->index == 6);
  EXPECT_LT(split->location_margin, 3);
}

TEST(LocateStep, CommitsWithoutRunsAreSkippedAndIndicesStayTheCallers) {
  auto runs = commits({100, 100, 100, 100, 104, 104, 104});
  runs.insert(runs.begin() + 2, std::vector<double>{});
  auto split = locate_step(runs, one_percent(), Direction::kLowerIsBetter, {});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->index, 5);
  EXPECT_FALSE(locate_step(commits({100, 100, 100}), one_percent(), Direction::kLowerIsBetter, {}).has_value());
}

TEST(CompareSplit, ComparesEveryRunBeforeTheIndexWithEveryRunFromIt) {
  const auto runs = commits({100, 100, 104, 104, 104});
  const Comparison c = compare_split(runs, 2, one_percent(), Direction::kLowerIsBetter, {});
  EXPECT_EQ(c.runs_a, 8);
  EXPECT_EQ(c.runs_b, 12);
  EXPECT_NEAR(c.ratio, 1.04, 1e-3);
}

}  // namespace
}  // namespace perfwatch::analysis
