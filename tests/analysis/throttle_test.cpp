#include "analysis/throttle.h"

#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

TEST(Throttle, DropsThrottledTrialsAndCountsThem) {
  const std::vector<TrialValue> trials = {
      {100, false}, {180, true}, {101, false}, {99, false}, {175, true}, {100.5, false}};
  const UnthrottledTrials kept = drop_throttled(trials);
  EXPECT_EQ(kept.dropped, 2);
  EXPECT_EQ(kept.values, (std::vector<double>{100, 101, 99, 100.5}));
  const UnthrottledSummary s = summarize_unthrottled(trials);
  EXPECT_EQ(s.kept, 4);
  EXPECT_EQ(s.dropped, 2);
  ASSERT_TRUE(s.summary.has_value());
  EXPECT_EQ(s.summary->n, 4);
  EXPECT_DOUBLE_EQ(s.summary->median, 100.25);
  EXPECT_EQ(s.summary->max, 101);
}

TEST(Throttle, AllThrottledLeavesNoSummary) {
  const std::vector<TrialValue> trials = {{180, true}, {175, true}};
  const UnthrottledSummary s = summarize_unthrottled(trials);
  EXPECT_FALSE(s.summary.has_value());
  EXPECT_EQ(s.dropped, 2);
  EXPECT_EQ(s.kept, 0);
  EXPECT_FALSE(summarize_unthrottled({}).summary.has_value());
}

}  // namespace
}  // namespace perfwatch::analysis
