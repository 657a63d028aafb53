#include "analysis/follow_up.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/random.h"

namespace perfwatch::analysis {
namespace {

// 40 commits, 3 runs each with 2% run noise, +6% from commit 20 on.
struct Fixture {
  std::vector<std::vector<double>> runs;
  std::vector<Comparison> comparisons;
  NoiseBand band;
  Fixture() {
    SeededRng rng(3);
    for (int c = 0; c < 40; ++c) {
      runs.emplace_back();
      for (int r = 0; r < 3; ++r) {
        runs.back().push_back((c >= 20 ? 106 : 100) * std::exp(0.02 * rng.normal()));
      }
    }
    NoiseEvidence e;
    e.sum_sq_log = 0.02 * 0.02 * 50;
    e.df = 50;
    band = noise_band(e);
    comparisons.resize(40);
    for (int c = 1; c < 40; ++c) {
      comparisons[c] = compare_runs(runs[c - 1], runs[c], band, Direction::kLowerIsBetter);
    }
  }
};

TEST(CommitsToReopen, RanksTheStepCommitFirstEvenWhenTheChangePointIsOffByOne) {
  Fixture f;
  for (int reported : {19, 20, 21, 22}) {
    ChangePoint cp;
    cp.index = reported;
    cp.mean_before = 100;
    cp.mean_after = 106;
    const std::vector<ChangePoint> cps = {cp};
    // Pretend nothing is flagged yet.
    std::vector<Comparison> quiet = f.comparisons;
    for (Comparison& c : quiet) c.verdict = ChangeVerdict::kUndecided;
    const std::vector<int> reopen = commits_to_reopen(cps, 0, f.runs, quiet);
    ASSERT_FALSE(reopen.empty()) << reported;
    EXPECT_EQ(reopen[0], 20) << "change point reported at " << reported;
    EXPECT_LE(reopen.size(), 2u);
  }
}

TEST(CommitsToReopen, NothingWhenAFlagAlreadyExplainsIt) {
  Fixture f;
  ChangePoint cp;
  cp.index = 21;
  cp.mean_before = 100;
  cp.mean_after = 106;
  const std::vector<ChangePoint> cps = {cp};
  std::vector<Comparison> comparisons = f.comparisons;
  comparisons[20].verdict = ChangeVerdict::kRegression;
  comparisons[20].ratio = 1.06;
  EXPECT_TRUE(commits_to_reopen(cps, 0, f.runs, comparisons).empty());
  // A flag in the other direction does not explain an upward step.
  comparisons[20].verdict = ChangeVerdict::kImprovement;
  comparisons[20].ratio = 0.94;
  EXPECT_FALSE(commits_to_reopen(cps, 0, f.runs, comparisons).empty());
}

TEST(CommitsToReopen, StaysInsideTheChangePointsSegment) {
  Fixture f;
  ChangePoint first, second;
  first.index = 20;
  first.mean_before = 100;
  first.mean_after = 106;
  second.index = 22;  // a (made-up) second change point bounds the window
  second.mean_before = 106;
  second.mean_after = 100;
  const std::vector<ChangePoint> cps = {first, second};
  std::vector<Comparison> quiet = f.comparisons;
  for (Comparison& c : quiet) c.verdict = ChangeVerdict::kUndecided;
  FollowUpPolicy all;
  all.max_candidates = 10;
  for (int k : commits_to_reopen(cps, 0, f.runs, quiet, all)) {
    EXPECT_GE(k, 1);
    EXPECT_LT(k, 22);
  }
}

}  // namespace
}  // namespace perfwatch::analysis
