// Recoveries: a revert or a fix that undoes an open regression closes its
// alert group, judged over a store history (no git, no bench), and the
// pure rule over plain flags.
#include "judge/recoveries.h"

#include <gtest/gtest.h>

#include "judge/judge_commit.h"
#include "store/alert_group_store.h"
#include "store/analysis_store.h"
#include "tests/judge/synthetic_history.h"

namespace perfwatch::judge::testing {
namespace {

class RecoveryTest : public ::testing::Test {
 protected:
  RecoveryTest() : manifest_(SyntheticHistory::manifest()) {}

  // Each commit measured in 3 runs at its value (0.5% noise) and judged in
  // order, after the commits of earlier calls.
  std::vector<store::CommitRecord> history(const std::vector<double>& values) {
    std::vector<store::CommitRecord> out;
    for (double v : values) {
      auto c = h_.add_commit();
      h_.add_runs(c, 3, flat(v), 0.005);
      JudgeRequest r;
      r.manifest = &manifest_;
      r.repo = h_.repo();
      r.commit = c;
      r.testbed = h_.testbed();
      if (!all_.empty()) r.previous = all_.back();
      auto judged = judge_commit(h_.db(), r);
      EXPECT_TRUE(judged.has_value()) << judged.error().to_string();
      if (judged) recoveries_.insert(recoveries_.end(), judged->recoveries.begin(), judged->recoveries.end());
      out.push_back(c);
      all_.push_back(c);
    }
    return out;
  }

  std::optional<store::GroupTriageRecord> triage_of(const store::CommitRecord& c) {
    auto t = store::AlertGroupReader(h_.db()).triage(c.id, h_.testbed());
    EXPECT_TRUE(t.has_value());
    return t ? *t : std::nullopt;
  }

  int open_flags_of(const store::CommitRecord& c) {
    int n = 0;
    for (const auto& f : h_.flags_of(c)) n += f.standing() && !f.acknowledged;
    return n;
  }

  SyntheticHistory h_;
  runner::Manifest manifest_;
  std::vector<Recovery> recoveries_;
  std::vector<store::CommitRecord> all_;
};

TEST_F(RecoveryTest, ARevertClosesTheRegressionsGroupAsRecoveredAtItsCommit) {
  auto c = history({100, 100, 100, 120, 120, 100, 100});
  ASSERT_EQ(h_.flags_of(c[3]).size(), 4u);
  ASSERT_EQ(h_.flags_of(c[5]).size(), 4u);
  EXPECT_EQ(open_flags_of(c[3]), 0);
  EXPECT_EQ(open_flags_of(c[5]), 0);
  auto regressed = triage_of(c[3]);
  ASSERT_TRUE(regressed.has_value());
  EXPECT_EQ(regressed->triage, store::GroupTriage::kRecovered);
  EXPECT_EQ(regressed->linked_commit_id, c[5].id);
  EXPECT_NE(regressed->reason.find(c[5].sha.substr(0, 10)), std::string::npos) << regressed->reason;
  auto revert = triage_of(c[5]);
  ASSERT_TRUE(revert.has_value());
  EXPECT_EQ(revert->triage, store::GroupTriage::kRecovery);
  EXPECT_EQ(revert->linked_commit_id, c[3].id);
  ASSERT_EQ(recoveries_.size(), 1u);
  EXPECT_EQ(recoveries_[0].regressed, c[3].id);
  EXPECT_EQ(recoveries_[0].recovered_at, c[5].id);
  for (const auto& f : h_.flags_of(c[3])) {
    ASSERT_TRUE(f.acknowledged.has_value());
    EXPECT_EQ(f.acknowledged->by, "judge");
  }
}

TEST_F(RecoveryTest, AFixOfAFractionOfTheStepLeavesTheGroupOpen) {
  // 100 -> 140 -> 125: a speed-up of 11% undoes a third of a 40% slowdown.
  auto c = history({100, 100, 100, 140, 140, 125, 125});
  ASSERT_FALSE(h_.flags_of(c[5]).empty()) << "the partial fix is a change of its own";
  EXPECT_EQ(open_flags_of(c[3]), 4);
  EXPECT_FALSE(triage_of(c[3]).has_value());
  EXPECT_TRUE(recoveries_.empty());
}

TEST_F(RecoveryTest, AnImprovementFollowedByARegressionIsNotARecovery) {
  // A lost improvement is news, not a recovery: both groups stay open.
  auto c = history({120, 120, 120, 100, 100, 120, 120});
  EXPECT_EQ(open_flags_of(c[3]), 4);
  EXPECT_EQ(open_flags_of(c[5]), 4);
  EXPECT_TRUE(recoveries_.empty());
}

TEST_F(RecoveryTest, AGroupThatAPersonAcknowledgedIsNotReopenedOrRelinked) {
  auto c = history({100, 100, 100, 120, 120});
  auto acked = store::AlertGroupWriter(h_.db())
                   .triage({c[3].id, h_.testbed(), store::GroupTriage::kExpected, "bigger tiles, traded on purpose",
                            "alice", 0, std::nullopt});
  ASSERT_TRUE(acked.has_value()) << acked.error().to_string();
  EXPECT_EQ(*acked, 4);
  auto rest = history({100, 100});
  EXPECT_EQ(triage_of(c[3])->triage, store::GroupTriage::kExpected);
  EXPECT_TRUE(recoveries_.empty());
  EXPECT_EQ(open_flags_of(rest[0]), 4) << "nothing open to undo: the revert's flags are news";
}

// The rule itself, over plain flags.
store::FlagRecord flag(store::FlagId id, const std::string& variant, store::PointId point, store::FlagKind kind,
                       double magnitude) {
  store::FlagRecord f;
  f.id = id;
  f.variant = variant;
  f.point_id = point;
  f.kind = kind;
  f.magnitude_rel = magnitude;
  return f;
}

TEST(MatchRecovery, EveryOpenCellMustBeUndoneByAboutAsMuch) {
  using K = store::FlagKind;
  std::vector<store::FlagRecord> group = {flag(1, "a", 1, K::kRegression, 0.20), flag(2, "a", 2, K::kRegression, 0.10)};
  std::vector<store::FlagRecord> fix = {flag(11, "a", 1, K::kImprovement, 1 / 1.2 - 1),
                                        flag(12, "a", 2, K::kImprovement, -0.06)};
  auto r = match_recovery(group, fix);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->undone, (std::vector<store::FlagId>{1, 2}));
  EXPECT_EQ(r->undoing, (std::vector<store::FlagId>{11, 12}));
  // One cell left as it was: not recovered.
  EXPECT_FALSE(match_recovery(group, std::span(fix).first(1)).has_value());
  // Undone by far too little (a tenth) or far too much (three times).
  fix[1].magnitude_rel = -0.01;
  EXPECT_FALSE(match_recovery(group, fix).has_value());
  fix[1].magnitude_rel = 1 / 1.1 / 1.1 / 1.1 - 1;
  EXPECT_FALSE(match_recovery(group, fix).has_value());
  // The same direction again is not an undoing.
  fix[1] = flag(12, "a", 2, K::kRegression, 0.1);
  EXPECT_FALSE(match_recovery(group, fix).has_value());
  // A drift flag says its direction in its detail, and can be undone too.
  std::vector<store::FlagRecord> drift = {flag(3, "a", 1, K::kDrift, 0.2)};
  drift[0].detail = {{"verdict", "regression"}};
  EXPECT_TRUE(match_recovery(drift, std::span(fix).first(1)).has_value());
  // Acknowledged or withdrawn flags of the group need no undoing.
  group[1].acknowledged = store::Acknowledgement{"known", "bob", 1};
  EXPECT_TRUE(match_recovery(group, std::span(fix).first(1)).has_value());
}

}  // namespace
}  // namespace perfwatch::judge::testing
