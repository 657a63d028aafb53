// The run plan alone: comparisons and counts in, runs per side out.
#include "judge/run_plan.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace perfwatch::judge {
namespace {

analysis::Comparison comparison(analysis::ChangeVerdict verdict, int runs_a, int runs_b) {
  analysis::Comparison c;
  c.verdict = verdict;
  c.runs_a = runs_a;
  c.runs_b = runs_b;
  return c;
}

CellLook cell(store::PointId point, analysis::ChangeVerdict verdict, int runs_a = 3, int runs_b = 3,
              const std::string& variant = "base") {
  return {{variant, point}, comparison(verdict, runs_a, runs_b)};
}

using V = analysis::ChangeVerdict;

TEST(RunPlan, DecidedCellsNeedNoRuns) {
  std::vector<CellLook> cells = {cell(1, V::kWithinNoise), cell(2, V::kRegression, 6, 6),
                                 cell(3, V::kImprovement, 8, 6)};
  RunPlan plan = plan_runs({cells, {6, 8, true}, {6, 8, true}});
  EXPECT_TRUE(plan.done());
  EXPECT_EQ(plan.undecided, 0);
}

TEST(RunPlan, AChangeSeenOnFewRunsIsMeasuredAgainBeforeItIsFlagged) {
  std::vector<CellLook> cells = {cell(1, V::kWithinNoise), cell(2, V::kRegression, 3, 3)};
  RunPlan plan = plan_runs({cells, {3, 8, true}, {3, 8, true}});
  EXPECT_EQ(plan.a.runs, 3);  // to runs_to_flag (6) a side
  EXPECT_EQ(plan.b.runs, 3);
  PlanRequest r{cells, {3, 8, true}, {3, 8, true}};
  r.runs_to_flag = 3;  // a manifest that trusts 3 runs
  EXPECT_TRUE(plan_runs(r).done());
  // Never past the budget: a commit with 7 processes gets one more.
  plan = plan_runs({cells, {3, 8, true}, {7, 8, true}});
  EXPECT_EQ(plan.b.runs, 1);
}

TEST(RunPlan, AnUndecidedCellGrowsBothSidesAndEachRunMeasuresEveryPoint) {
  std::vector<CellLook> cells = {cell(1, V::kWithinNoise), cell(2, V::kUndecided), cell(2, V::kWithinNoise, 3, 3, "wide")};
  RunPlan plan = plan_runs({cells, {3, 12, true}, {3, 12, true}});
  EXPECT_EQ(plan.undecided, 1);
  EXPECT_EQ(plan.a.runs, 3);  // 3 -> 6 a side
  EXPECT_EQ(plan.b.runs, 3);
  EXPECT_EQ(plan.a.points, (std::set<store::PointId>{1, 2}));
  EXPECT_EQ(plan.b.points, (std::set<store::PointId>{1, 2}));
}

TEST(RunPlan, WithoutEveryPointARunMeasuresOnlyThePointsThatAskedForIt) {
  std::vector<CellLook> cells = {cell(1, V::kWithinNoise), cell(2, V::kUndecided), cell(2, V::kWithinNoise, 3, 3, "wide")};
  PlanRequest r{cells, {3, 12, true}, {3, 12, true}};
  r.every_point = false;
  RunPlan plan = plan_runs(r);
  EXPECT_EQ(plan.undecided, 1);
  EXPECT_EQ(plan.a.runs, 3);  // 3 -> 6 a side
  EXPECT_EQ(plan.b.runs, 3);
  EXPECT_EQ(plan.a.points, (std::set<store::PointId>{2}));
  EXPECT_EQ(plan.b.points, (std::set<store::PointId>{2}));
}

TEST(RunPlan, TheBudgetCapsEveryProcessOfACommitNotTheRunsOfACell) {
  // The cell has had 3 runs a side, but B's commit has had 7 processes
  // (partial runs of other points, an earlier job): one more is all it gets.
  std::vector<CellLook> cells = {cell(1, V::kUndecided, 3, 3)};
  RunPlan plan = plan_runs({cells, {3, 8, true}, {7, 8, true}});
  EXPECT_EQ(plan.a.runs, 3);
  EXPECT_EQ(plan.b.runs, 1);
  plan = plan_runs({cells, {8, 8, true}, {9, 8, true}});  // both over (an older budget): nothing
  EXPECT_TRUE(plan.done());
  EXPECT_TRUE(plan.a.points.empty());
}

TEST(RunPlan, AReferenceWhoseBuildIsGoneDoesNotGrow) {
  std::vector<CellLook> cells = {cell(1, V::kUndecided, 3, 3)};
  RunPlan plan = plan_runs({cells, {3, 12, false}, {3, 12, true}});
  EXPECT_EQ(plan.a.runs, 0);
  EXPECT_EQ(plan.b.runs, 3);
}

TEST(RunPlan, AConfirmationGrowsTheCellsItIsAboutEvenWithinNoiseButNotAFlaggedOne) {
  std::vector<CellLook> cells = {cell(1, V::kWithinNoise), cell(2, V::kWithinNoise), cell(3, V::kRegression),
                                 cell(4, V::kUndecided)};
  PlanRequest r{cells, {3, 12, true}, {3, 12, true}, /*confirm=*/true, {{"base", 1}, {"base", 3}}};
  r.every_point = false;
  RunPlan plan = plan_runs(r);
  EXPECT_EQ(plan.a.points, (std::set<store::PointId>{1}));  // 3 is decided; 2 and 4 were not asked about
  EXPECT_EQ(plan.b.runs, 3);
}

// Whatever the comparisons say, no commit is ever planned past its cap.
TEST(RunPlan, NoPlanEverTakesACommitPastRunsMaxPerCommit) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> runs(1, 14), verdict(0, 3), cap(3, 12), coin(0, 1);
  for (int trial = 0; trial < 2000; ++trial) {
    const int max = cap(rng);
    std::vector<CellLook> cells;
    for (store::PointId p = 1; p <= 4; ++p)
      cells.push_back(cell(p, static_cast<V>(verdict(rng)), runs(rng), runs(rng)));
    SideBudget a{runs(rng), max, coin(rng) == 1}, b{runs(rng), max, true};
    PlanRequest r{cells, a, b, coin(rng) == 1, {{"base", 1}, {"base", 2}}};
    RunPlan plan = plan_runs(r);
    EXPECT_LE(a.processes + plan.a.runs, std::max(max, a.processes)) << "trial " << trial;
    EXPECT_LE(b.processes + plan.b.runs, std::max(max, b.processes)) << "trial " << trial;
    EXPECT_EQ(plan.a.runs == 0, plan.a.points.empty());
    EXPECT_EQ(plan.b.runs == 0, plan.b.points.empty());
    if (!a.can_run) {
      EXPECT_EQ(plan.a.runs, 0);
    }
  }
}

}  // namespace
}  // namespace perfwatch::judge
