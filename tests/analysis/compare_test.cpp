#include "analysis/compare.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

// A band measured with plenty of evidence: sigma = 1% (log), 100 df.
NoiseBand calibrated_one_percent() {
  NoiseEvidence e;
  e.sum_sq_log = 0.01 * 0.01 * 100;
  e.df = 100;
  return noise_band(e);
}

TEST(CompareRuns, Names) {
  EXPECT_EQ(std::string(to_string(ChangeVerdict::kRegression)), "regression");
  EXPECT_EQ(std::string(to_string(ChangeVerdict::kImprovement)), "improvement");
  EXPECT_EQ(std::string(to_string(ChangeVerdict::kWithinNoise)), "within_noise");
  EXPECT_EQ(std::string(to_string(ChangeVerdict::kUndecided)), "undecided");
  EXPECT_EQ(std::string(to_string(Direction::kLowerIsBetter)), "lower_is_better");
  EXPECT_EQ(std::string(to_string(Direction::kHigherIsBetter)), "higher_is_better");
  EXPECT_EQ(parse_direction("higher_is_better"), Direction::kHigherIsBetter);
  EXPECT_EQ(parse_direction("lower_is_better"), Direction::kLowerIsBetter);
  EXPECT_FALSE(parse_direction("faster").has_value());
  EXPECT_EQ(parse_change_verdict("within_noise"), ChangeVerdict::kWithinNoise);
  EXPECT_FALSE(parse_change_verdict("within noise").has_value());
}

TEST(CompareRuns, ClearSlowdownIsARegressionForTimesAndAnImprovementForThroughput) {
  const std::vector<double> a = {100, 100.5, 99.5}, b = {110, 110.5, 109.5};
  const NoiseBand band = calibrated_one_percent();
  const Comparison t = compare_runs(a, b, band, Direction::kLowerIsBetter);
  EXPECT_EQ(t.verdict, ChangeVerdict::kRegression);
  EXPECT_NEAR(t.ratio, 1.1, 1e-4);
  EXPECT_LT(t.ci_low, t.ratio);
  EXPECT_GT(t.ci_high, t.ratio);
  EXPECT_GT(t.ci_low, 1.0);
  EXPECT_LT(t.p_value, 1e-6);
  EXPECT_EQ(t.df, 104);  // band's 100 + 3 + 3 - 2
  EXPECT_TRUE(t.band_calibrated);
  // The band of this comparison: t_{0.975,100} * 1% * sqrt(2/3) = 1.63%.
  EXPECT_NEAR(t.band_rel, std::expm1(1.983972 * 0.01 * std::sqrt(2.0 / 3)), 1e-5);
  EXPECT_NEAR(t.delta_rel(), 0.1, 1e-4);
  EXPECT_EQ(compare_runs(a, b, band, Direction::kHigherIsBetter).verdict,
            ChangeVerdict::kImprovement);
  EXPECT_EQ(compare_runs(b, a, band, Direction::kLowerIsBetter).verdict,
            ChangeVerdict::kImprovement);
}

TEST(CompareRuns, NoChangeIsWithinNoise) {
  const std::vector<double> a = {100, 100.2, 99.8}, b = {100.1, 100.0, 100.2};
  const Comparison c = compare_runs(a, b, calibrated_one_percent(), Direction::kLowerIsBetter);
  EXPECT_EQ(c.verdict, ChangeVerdict::kWithinNoise);
  EXPECT_GT(c.p_value, 0.5);
  EXPECT_NEAR(c.margin_rel, 0.02, 1e-12);  // min_effect_rel: the band (1.63%) is smaller
  EXPECT_EQ(more_runs(c).add_a + more_runs(c).add_b, 0);
}

// Significant but inside the band: not a flag. The default band (+-5%,
// uncalibrated) and runs that agree to 0.01%: Welch's p is tiny, the change
// (2%) is inside the band and its CI inside the margin.
TEST(CompareRuns, SignificantInsideTheBandIsNotAFlag) {
  const std::vector<double> a = {100, 100.01, 99.99}, b = {102, 102.01, 101.99};
  const Comparison c = compare_runs(a, b, noise_band(NoiseEvidence{}), Direction::kLowerIsBetter);
  EXPECT_FALSE(c.band_calibrated);
  EXPECT_LT(c.p_value, 1e-6);
  EXPECT_NEAR(c.band_rel, 0.05, 1e-12);
  EXPECT_EQ(c.verdict, ChangeVerdict::kWithinNoise);
}

// Outside the band but not significant: undecided, and more runs are asked
// for, 3 -> 6 -> 12 a side, then nothing (budget spent).
TEST(CompareRuns, OutsideTheBandButNotSignificantIsUndecided) {
  const std::vector<double> a = {100, 110, 90}, b = {112, 125, 100};
  const Comparison c = compare_runs(a, b, noise_band(NoiseEvidence{}), Direction::kLowerIsBetter);
  EXPECT_GT(c.delta_rel(), 0.05);
  EXPECT_GT(c.p_value, 0.05);
  EXPECT_EQ(c.verdict, ChangeVerdict::kUndecided);
  RunRequest r = more_runs(c);
  EXPECT_EQ(r.add_a, 3);
  EXPECT_EQ(r.add_b, 3);
  Comparison at6 = c;
  at6.runs_a = at6.runs_b = 6;
  r = more_runs(at6);
  EXPECT_EQ(r.add_a, 6);
  EXPECT_EQ(r.add_b, 6);
  Comparison at12 = c;
  at12.runs_a = at12.runs_b = 12;
  r = more_runs(at12);
  EXPECT_EQ(r.add_a + r.add_b, 0);
  // A baseline that cannot be re-run: only B grows.
  RunBudget pinned;
  pinned.can_rerun_baseline = false;
  r = more_runs(c, pinned);
  EXPECT_EQ(r.add_a, 0);
  EXPECT_EQ(r.add_b, 3);
  // Unbalanced: the smaller side catches up.
  Comparison uneven = c;
  uneven.runs_a = 12;
  r = more_runs(uneven);
  EXPECT_EQ(r.add_a, 0);
  EXPECT_EQ(r.add_b, 9);
}

TEST(CompareRuns, ConfirmationReopensWithinNoiseButNotFlags) {
  const std::vector<double> a = {100, 100.2, 99.8}, b = {100.1, 100.0, 100.2};
  const Comparison quiet = compare_runs(a, b, calibrated_one_percent(), Direction::kLowerIsBetter);
  ASSERT_EQ(quiet.verdict, ChangeVerdict::kWithinNoise);
  RunRequest r = confirmation_runs(quiet, RunBudget{});
  EXPECT_EQ(r.add_a, 3);
  EXPECT_EQ(r.add_b, 3);
  Comparison at12 = quiet;
  at12.runs_a = at12.runs_b = 12;
  EXPECT_EQ(confirmation_runs(at12, RunBudget{}).add_b, 12);  // up to max_runs_confirm = 24
  at12.runs_a = at12.runs_b = 24;
  EXPECT_EQ(confirmation_runs(at12, RunBudget{}).add_b, 0);
  const std::vector<double> slow = {110, 110.5, 109.5};
  const Comparison flagged =
      compare_runs(a, slow, calibrated_one_percent(), Direction::kLowerIsBetter);
  ASSERT_EQ(flagged.verdict, ChangeVerdict::kRegression);
  EXPECT_EQ(confirmation_runs(flagged, RunBudget{}).add_b, 0);
}

TEST(CommitValue, IsTheGeometricMeanOfRunMedians) {
  EXPECT_NEAR(commit_value(std::vector<double>{100, 121}), 110, 1e-9);
  EXPECT_NEAR(commit_value(std::vector<double>{50}), 50, 1e-12);
  const std::vector<double> a = {100, 102, 98}, b = {110, 112, 108};
  const Comparison c = compare_runs(a, b, calibrated_one_percent(), Direction::kLowerIsBetter);
  EXPECT_NEAR(c.ratio, commit_value(b) / commit_value(a), 1e-12);
}

TEST(CompareRuns, OneRunASideWithoutCalibrationIsNoEvidence) {
  const std::vector<double> a = {100}, b = {150};
  const Comparison c = compare_runs(a, b, noise_band(NoiseEvidence{}), Direction::kLowerIsBetter);
  EXPECT_EQ(c.verdict, ChangeVerdict::kUndecided);
  EXPECT_EQ(c.p_value, 1);
  EXPECT_NEAR(c.ratio, 1.5, 1e-12);
  // With a calibrated band one run a side is a valid (if weak) comparison.
  const Comparison d = compare_runs(a, b, calibrated_one_percent(), Direction::kLowerIsBetter);
  EXPECT_EQ(d.verdict, ChangeVerdict::kRegression);
}

}  // namespace
}  // namespace perfwatch::analysis
