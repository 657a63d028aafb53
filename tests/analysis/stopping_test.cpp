#include "analysis/stopping.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

TEST(StopReason, Names) {
  EXPECT_EQ(std::string(to_string(StopReason::kContinue)), "continue");
  EXPECT_EQ(std::string(to_string(StopReason::kConverged)), "converged");
  EXPECT_EQ(std::string(to_string(StopReason::kMaxTrials)), "max_trials");
  EXPECT_EQ(std::string(to_string(StopReason::kBudget)), "budget");
}

TEST(StoppingRule, StopsAtMinTrialsWhenTight) {
  TrialPolicy policy;  // min 5, max 50, 1%, 30 s
  std::vector<double> trials = {100.0, 100.2, 99.9, 100.1};
  EXPECT_EQ(stopping_rule(trials, policy, 1.0), StopReason::kContinue)
      << "tight but below min_trials";
  trials.push_back(100.05);
  EXPECT_EQ(stopping_rule(trials, policy, 1.0), StopReason::kConverged);
}

TEST(StoppingRule, ContinuesWhenLoose) {
  TrialPolicy policy;
  std::vector<double> trials = {100, 110, 95, 104, 90, 107, 98, 101};
  EXPECT_EQ(stopping_rule(trials, policy, 1.0), StopReason::kContinue);
}

TEST(StoppingRule, StopsAtMaxTrials) {
  TrialPolicy policy;
  policy.max_trials = 8;
  std::vector<double> trials = {100, 110, 95, 104, 90, 107, 98, 101};
  EXPECT_EQ(stopping_rule(trials, policy, 1.0), StopReason::kMaxTrials);
}

TEST(StoppingRule, StopsAtBudgetEvenBeforeMinTrials) {
  TrialPolicy policy;
  std::vector<double> trials = {100, 110};
  EXPECT_EQ(stopping_rule(trials, policy, 29.9), StopReason::kContinue);
  EXPECT_EQ(stopping_rule(trials, policy, 30.0), StopReason::kBudget);
}

TEST(StoppingRule, NoTrialsYetContinues) {
  TrialPolicy policy;
  EXPECT_EQ(stopping_rule({}, policy, 0.0), StopReason::kContinue);
}

TEST(StoppingRule, ConvergenceWinsOverLimitsWhenBothHold) {
  TrialPolicy policy;
  policy.max_trials = 5;
  std::vector<double> trials = {100, 100, 100, 100, 100};
  EXPECT_EQ(stopping_rule(trials, policy, 99.0), StopReason::kConverged);
}

}  // namespace
}  // namespace perfwatch::analysis
