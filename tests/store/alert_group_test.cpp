// Alert groups in the store: schema version 11 over an older database, and
// triaging a group acknowledges its flags in one go.
#include "store/alert_group_store.h"

#include <gtest/gtest.h>

#include "store/migrations.h"
#include "tests/store/store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

struct Seeded {
  RepoId repo = 0;
  CommitId commit = 0, other = 0;
  TestbedId testbed = 0, second_testbed = 0;
  std::vector<FlagId> flags;
};

Seeded seed(Database& db) {
  Seeded s;
  s.repo = *RepoWriter(db).ensure_repo({.path = "/r", .name = "r"});
  s.commit = *RepoWriter(db).put_commit({.repo_id = s.repo, .sha = testing::sha_of(1)});
  s.other = *RepoWriter(db).put_commit({.repo_id = s.repo, .sha = testing::sha_of(2)});
  s.testbed = *RunWriter(db).ensure_testbed({.name = "h200"});
  s.second_testbed = *RunWriter(db).ensure_testbed({.name = "rtx5090"});
  const PointId p1 = *RunWriter(db).ensure_point(testing::point_record(1));
  const PointId p8 = *RunWriter(db).ensure_point(testing::point_record(8));
  AnalysisWriter w(db);
  for (auto [variant, point] : {std::pair{"base", p1}, {"base", p8}, {"wide", p1}}) {
    auto f = w.raise_flag({.commit_id = s.commit, .testbed_id = s.testbed, .variant = variant, .point_id = point,
                           .kind = FlagKind::kRegression, .magnitude_rel = 0.1});
    EXPECT_TRUE(f.has_value());
    s.flags.push_back(f->id);
  }
  // The same commit on another testbed is another group.
  EXPECT_TRUE(w.raise_flag({.commit_id = s.commit, .testbed_id = s.second_testbed, .variant = "base", .point_id = p1,
                            .kind = FlagKind::kRegression, .magnitude_rel = 0.1})
                  .has_value());
  return s;
}

int open_flags(Database& db, CommitId commit, TestbedId testbed) {
  FlagFilter f;
  f.commit_id = commit;
  f.testbed_id = testbed;
  f.state = FlagState::kOpen;
  return static_cast<int>(AnalysisReader(db).flags(f)->size());
}

TEST(AlertGroupMigration, AVersionTenDatabaseGetsTheTableAndKeepsItsFlagsOpen) {
  TempDbPath tmp;
  Seeded s;
  {
    PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 10}));
    s = seed(db);
  }
  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  EXPECT_EQ(open_flags(db, s.commit, s.testbed), 3);
  PW_UNWRAP(none, AlertGroupReader(db).triage(s.commit, s.testbed));
  EXPECT_FALSE(none.has_value()) << "an old group is untriaged";
  PW_UNWRAP(acked, AlertGroupWriter(db).triage({.commit_id = s.commit, .testbed_id = s.testbed,
                                                .triage = GroupTriage::kInvalid, .reason = "a noisy node",
                                                .by = "alice"}));
  EXPECT_EQ(acked, 3);
}

TEST(AlertGroups, TriagingAGroupAcknowledgesItsFlagsAndNoOtherTestbeds) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  Seeded s = seed(db);
  PW_ASSERT_OK(AnalysisWriter(db).acknowledge_flag(s.flags[0], "seen", "bob"));
  PW_UNWRAP(acked, AlertGroupWriter(db).triage({.commit_id = s.commit, .testbed_id = s.testbed,
                                                .triage = GroupTriage::kExpected,
                                                .reason = "the new split-KV trades C1 for C96", .by = "alice"}));
  EXPECT_EQ(acked, 2) << "the flag acknowledged before keeps its own acknowledgement";
  EXPECT_EQ(open_flags(db, s.commit, s.testbed), 0);
  EXPECT_EQ(open_flags(db, s.commit, s.second_testbed), 1);
  PW_UNWRAP(f0, AnalysisReader(db).flag(s.flags[0]));
  EXPECT_EQ(f0.flag.acknowledged->reason, "seen");
  PW_UNWRAP(f1, AnalysisReader(db).flag(s.flags[1]));
  EXPECT_EQ(f1.flag.acknowledged->reason, "expected: the new split-KV trades C1 for C96");
  EXPECT_EQ(f1.flag.acknowledged->by, "alice");
  PW_UNWRAP(t, AlertGroupReader(db).triage(s.commit, s.testbed));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->triage, GroupTriage::kExpected);
  EXPECT_EQ(t->by, "alice");
  PW_UNWRAP(all, AlertGroupReader(db).triages(s.repo));
  EXPECT_EQ(all.size(), 1u);
  // Triaged again: replaced, not added.
  PW_ASSERT_OK(AlertGroupWriter(db).triage({.commit_id = s.commit, .testbed_id = s.testbed,
                                            .triage = GroupTriage::kAcknowledged, .reason = "looking", .by = "c"}));
  EXPECT_EQ(AlertGroupReader(db).triage(s.commit, s.testbed)->value().triage, GroupTriage::kAcknowledged);
  EXPECT_EQ(AlertGroupReader(db).triages(s.repo)->size(), 1u);
}

TEST(AlertGroups, WhatCannotBeTriagedSaysWhy) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  Seeded s = seed(db);
  AlertGroupWriter w(db);
  auto empty_reason = w.triage({.commit_id = s.commit, .testbed_id = s.testbed, .triage = GroupTriage::kInvalid});
  ASSERT_FALSE(empty_reason.has_value());
  EXPECT_EQ(empty_reason.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(empty_reason.error().to_string().find("reason"), std::string::npos);
  auto no_flags =
      w.triage({.commit_id = s.other, .testbed_id = s.testbed, .triage = GroupTriage::kInvalid, .reason = "x"});
  ASSERT_FALSE(no_flags.has_value());
  EXPECT_EQ(no_flags.error().code, ErrorCode::kNotFound);
  auto unlinked =
      w.triage({.commit_id = s.commit, .testbed_id = s.testbed, .triage = GroupTriage::kRecovered, .reason = "x"});
  ASSERT_FALSE(unlinked.has_value());
  EXPECT_EQ(unlinked.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(open_flags(db, s.commit, s.testbed), 3) << "nothing half done";
}

}  // namespace
}  // namespace perfwatch::store
