// The webhook outbox: a message is pending until delivered, due again at its
// retry time after a failed attempt, failed when the sender gives up, kept
// in every state; it is written with the caller's transaction or not at
// all, and survives the process that wrote it.
#include <set>

#include <gtest/gtest.h>

#include "store/outbox_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

class Outbox : public ::testing::Test {
 protected:
  void SetUp() override { open(); }
  void open() {
    db_.reset();
    OpenOptions options;
    options.clock = [this] { return now_; };
    auto opened = Database::open(tmp_.path(), options);
    ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
    db_ = std::make_unique<Database>(std::move(*opened));
  }
  static OutboxMessage message(const std::string& event = "regression") {
    return {.url = "http://127.0.0.1:9/hook", .event = event, .commit_sha = testing::sha_of(1),
            .body = {{"event", event}, {"text", "perfwatch: regression +50.0%"}}};
  }
  TempDbPath tmp_;
  std::unique_ptr<Database> db_;
  UnixSeconds now_ = 1'800'000'000;
};

TEST_F(Outbox, AMessageIsPendingAndDueUntilDeliveredThenKeptWithItsTimeAndAttempts) {
  OutboxWriter out(*db_);
  PW_UNWRAP(added, out.add(message()));
  EXPECT_GT(added.id, 0);
  EXPECT_EQ(added.state, OutboxState::kPending);
  EXPECT_EQ(added.attempts, 0);
  EXPECT_EQ(added.created_at, now_);
  EXPECT_EQ(added.next_attempt_at, now_);
  EXPECT_EQ(added.body["event"], "regression");
  PW_UNWRAP(due, out.due());
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0], added);

  now_ += 7;
  PW_ASSERT_OK(out.delivered(added.id));
  PW_UNWRAP(kept, OutboxReader(*db_).message(added.id));
  EXPECT_EQ(kept.state, OutboxState::kDelivered);
  EXPECT_EQ(kept.attempts, 1);
  EXPECT_EQ(kept.delivered_at, now_);
  EXPECT_EQ(kept.last_attempt_at, now_);
  EXPECT_EQ(kept.message_id, added.message_id);
  EXPECT_TRUE(out.due()->empty());
  // Delivered once: a second delivery of the same message is refused.
  auto again = out.delivered(added.id);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(again.error().message.find("is delivered, not pending"), std::string::npos) << again.error().message;
  EXPECT_EQ(out.delivered(999).error().code, ErrorCode::kNotFound);
}

TEST_F(Outbox, AFailedAttemptIsDueAgainAtItsRetryTimeAndFailedWhenTheSenderGivesUp) {
  OutboxWriter out(*db_);
  PW_UNWRAP(added, out.add(message()));
  PW_ASSERT_OK(out.attempt_failed(added.id, "POST answered 500", now_ + 30));
  EXPECT_TRUE(out.due()->empty()) << "not due before its retry time";
  PW_UNWRAP(waiting, OutboxReader(*db_).message(added.id));
  EXPECT_EQ(waiting.state, OutboxState::kPending);
  EXPECT_EQ(waiting.attempts, 1);
  EXPECT_EQ(waiting.last_error, "POST answered 500");
  EXPECT_EQ(waiting.next_attempt_at, now_ + 30);
  now_ += 30;
  ASSERT_EQ(out.due()->size(), 1u);

  PW_ASSERT_OK(out.attempt_failed(added.id, "POST failed: Connection", std::nullopt));
  PW_UNWRAP(failed, OutboxReader(*db_).message(added.id));
  EXPECT_EQ(failed.state, OutboxState::kFailed);
  EXPECT_EQ(failed.attempts, 2);
  EXPECT_EQ(failed.last_error, "POST failed: Connection");
  EXPECT_FALSE(failed.delivered_at.has_value());
  EXPECT_TRUE(out.due()->empty());
  EXPECT_EQ(out.attempt_failed(added.id, "x", now_).error().code, ErrorCode::kInvalidArgument);
  // Visible: listed by state and counted.
  OutboxFilter only_failed;
  only_failed.state = OutboxState::kFailed;
  PW_UNWRAP(listed, OutboxReader(*db_).messages(only_failed));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0], failed);
  PW_UNWRAP(counts, OutboxReader(*db_).counts());
  EXPECT_EQ(counts[OutboxState::kFailed], 1);
  EXPECT_EQ(counts[OutboxState::kPending], 0);
  EXPECT_EQ(counts[OutboxState::kDelivered], 0);
}

TEST_F(Outbox, EachMessageHasItsOwnIdWhichNeverChanges) {
  OutboxWriter out(*db_);
  std::set<std::string> ids;
  for (int i = 0; i < 200; ++i) {
    PW_UNWRAP(m, out.add(message()));
    EXPECT_EQ(m.message_id.rfind("pw-", 0), 0u) << m.message_id;
    EXPECT_EQ(m.message_id.size(), 3u + 32u) << m.message_id;
    ids.insert(m.message_id);
  }
  EXPECT_EQ(ids.size(), 200u);
  PW_UNWRAP(first, OutboxReader(*db_).message(1));
  PW_ASSERT_OK(out.attempt_failed(1, "timeout", now_ + 1));
  PW_ASSERT_OK(out.delivered(1));
  EXPECT_EQ(OutboxReader(*db_).message(1)->message_id, first.message_id);
}

TEST_F(Outbox, AMessageIsWrittenWithTheCallersTransactionOrNotAtAll) {
  {
    Transaction tx(*db_);
    PW_ASSERT_OK(tx.status());
    PW_ASSERT_OK(OutboxWriter(*db_).add(message()));
    // Rolled back (the judging it belonged to failed): gone with it.
  }
  EXPECT_TRUE(OutboxReader(*db_).messages({})->empty());
  {
    Transaction tx(*db_);
    PW_ASSERT_OK(OutboxWriter(*db_).add(message()));
    PW_ASSERT_OK(tx.commit());
  }
  EXPECT_EQ(OutboxReader(*db_).messages({})->size(), 1u);
}

TEST_F(Outbox, APendingMessageOutlivesTheProcessThatWroteIt) {
  PW_UNWRAP(added, OutboxWriter(*db_).add(message()));
  open();  // as a restarted daemon does
  PW_UNWRAP(due, OutboxWriter(*db_).due());
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].message_id, added.message_id);
}

TEST_F(Outbox, MessagesAreListedNewestFirstByStateAndPage) {
  OutboxWriter out(*db_);
  for (int i = 0; i < 5; ++i) PW_ASSERT_OK(out.add(message(i % 2 ? "regression_withdrawn" : "regression")));
  PW_ASSERT_OK(out.delivered(2));
  OutboxFilter page;
  page.limit = 2;
  page.offset = 1;
  PW_UNWRAP(listed, OutboxReader(*db_).messages(page));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, 4);
  EXPECT_EQ(listed[1].id, 3);
  OutboxFilter delivered;
  delivered.state = OutboxState::kDelivered;
  EXPECT_EQ(OutboxReader(*db_).messages(delivered)->size(), 1u);
  // Oldest due first.
  PW_UNWRAP(due, out.due(2));
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].id, 1);
  EXPECT_EQ(due[1].id, 3);
}

TEST_F(Outbox, BadInputIsRefusedNamingWhatIsWrong) {
  OutboxMessage no_url = message();
  no_url.url.clear();
  auto refused = OutboxWriter(*db_).add(no_url);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("url is empty"), std::string::npos);
  OutboxMessage no_event = message();
  no_event.event.clear();
  EXPECT_EQ(OutboxWriter(*db_).add(no_event).error().code, ErrorCode::kInvalidArgument);
  OutboxFilter negative;
  negative.limit = -1;
  EXPECT_EQ(OutboxReader(*db_).messages(negative).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(OutboxReader(*db_).message(42).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(parse_outbox_state("sent"), std::nullopt);
  EXPECT_EQ(parse_outbox_state("failed"), OutboxState::kFailed);
}

}  // namespace
}  // namespace perfwatch::store
