// Webhooks at least once: the outbox's sender against a real HTTP receiver
// (tests/daemon/hook_receiver.h) -- delivered once and marked, retried with
// backoff, failed after max_attempts with its error, a receiver that is down
// costing one attempt a round -- and the daemon: a message stored and not
// delivered (a crash, a receiver down) is delivered after the restart,
// exactly once per success, with the id it had.
#include <set>

#include <gmock/gmock.h>

#include "daemon/webhook_outbox.h"
#include "store/outbox_store.h"
#include "tests/daemon/daemon_fixture.h"
#include "tests/daemon/hook_receiver.h"

namespace perfwatch::daemon::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// A database with a clock the test moves, an event log it reads, the real
// HTTP poster.
class SenderTest : public ::testing::Test {
 protected:
  SenderTest() : log_([this](std::string_view line) { lines_.emplace_back(line); }) { open(); }
  void open() {
    db_.reset();
    store::OpenOptions o;
    o.clock = [this] { return now_; };
    auto db = store::Database::open(dir_ / "outbox.db", o);
    ASSERT_TRUE(db.has_value()) << db.error().to_string();
    db_ = std::make_unique<store::Database>(std::move(*db));
  }
  store::OutboxRecord add(const std::string& url, int n = 1) {
    store::OutboxMessage m;
    m.url = url;
    m.event = "regression";
    m.commit_sha = "3f2a9c1e05" + std::string(30, '0');
    m.body = {{"event", "regression"}, {"n", n}};
    auto added = store::OutboxWriter(*db_).add(m);
    EXPECT_TRUE(added.has_value()) << added.error().to_string();
    return added ? *added : store::OutboxRecord{};
  }
  DeliveryRound round() {
    auto r = deliver_due(*db_, log_, poster_, policy_);
    EXPECT_TRUE(r.has_value()) << r.error().to_string();
    return r ? *r : DeliveryRound{};
  }
  store::OutboxRecord stored(store::OutboxId id) { return *store::OutboxReader(*db_).message(id); }
  std::string log_text() const {
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

  perfwatch::testing::TempDir dir_{"perfwatch-outbox"};
  store::UnixSeconds now_ = 1'800'000'000;
  std::unique_ptr<store::Database> db_;
  std::vector<std::string> lines_;
  EventLog log_;
  HttpWebhookPoster poster_{2.0};
  DeliveryPolicy policy_{.max_attempts = 3, .first_retry_s = 30, .max_retry_s = 3600};
};

TEST_F(SenderTest, DeliversEachDueMessageOnceWithItsIdAndMarksItDelivered) {
  HookReceiver hook;
  auto a = add(hook.url(), 1);
  auto b = add(hook.url(), 2);
  DeliveryRound r = round();
  EXPECT_EQ(r.delivered, 2);
  EXPECT_EQ(r.retrying + r.failed + r.left, 0);
  auto got = hook.received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].body["n"], 1);
  EXPECT_EQ(got[0].body["event"], "regression");
  EXPECT_EQ(got[0].body["message_id"], a.message_id);
  EXPECT_EQ(got[0].message_id, a.message_id);  // the header says it too
  EXPECT_EQ(got[1].message_id, b.message_id);
  for (const auto& m : {a, b}) {
    auto kept = stored(m.id);
    EXPECT_EQ(kept.state, store::OutboxState::kDelivered);
    EXPECT_EQ(kept.attempts, 1);
    EXPECT_EQ(kept.delivered_at, now_);
  }
  EXPECT_THAT(log_text(), HasSubstr("step=webhook event=regression message_id=" + a.message_id + " attempt=1 status=ok"));
  // Nothing is sent twice.
  EXPECT_EQ(round().delivered, 0);
  EXPECT_EQ(hook.received().size(), 2u);
}

TEST_F(SenderTest, AFailingReceiverIsRetriedWithBackoffAndTheMessageIsFailedAfterMaxAttempts) {
  HookReceiver hook(500);
  auto m = add(hook.url());
  EXPECT_EQ(round().retrying, 1);
  EXPECT_EQ(stored(m.id).next_attempt_at, now_ + 30);
  EXPECT_EQ(stored(m.id).last_error, "POST answered 500");  // without the URL: the API shows it
  EXPECT_THAT(log_text(), HasSubstr("attempt=1 status=failed message=\"webhook " + hook.url() +
                                    ": POST answered 500\" retry_in_s=30"));
  // Not due yet: nothing is posted.
  now_ += 29;
  round();
  EXPECT_EQ(hook.received().size(), 1u);
  now_ += 1;
  EXPECT_EQ(round().retrying, 1);
  EXPECT_EQ(stored(m.id).next_attempt_at, now_ + 60);  // doubled
  now_ += 60;
  DeliveryRound last = round();
  EXPECT_EQ(last.failed, 1);
  auto failed = stored(m.id);
  EXPECT_EQ(failed.state, store::OutboxState::kFailed);
  EXPECT_EQ(failed.attempts, 3);
  EXPECT_EQ(failed.last_error, "POST answered 500");
  EXPECT_THAT(log_text(), HasSubstr("attempt=3 status=failed"));
  EXPECT_THAT(log_text(), HasSubstr("gave_up=yes"));
  // Every attempt carried the same id; a failed message is not tried again.
  for (const auto& r : hook.received()) EXPECT_EQ(r.message_id, m.message_id);
  now_ += 100000;
  round();
  EXPECT_EQ(hook.received().size(), 3u);
}

TEST_F(SenderTest, AReceiverThatIsDownCostsOneAttemptARoundNotOnePerMessage) {
  const std::string dead = "http://127.0.0.1:1/hook";  // nothing listens there
  HookReceiver alive;
  auto a = add(dead, 1);
  auto b = add(dead, 2);
  auto c = add(alive.url(), 3);
  DeliveryRound r = round();
  EXPECT_EQ(r.retrying, 1);
  EXPECT_EQ(r.left, 1);
  EXPECT_EQ(r.delivered, 1);  // another URL is not held up
  EXPECT_EQ(stored(a.id).attempts, 1);
  EXPECT_THAT(stored(a.id).last_error, HasSubstr("POST failed"));
  EXPECT_EQ(stored(b.id).attempts, 0);
  EXPECT_EQ(stored(b.id).state, store::OutboxState::kPending);
  EXPECT_EQ(stored(c.id).state, store::OutboxState::kDelivered);
}

TEST(RetryAt, WaitsDoubleFromTheFirstUpToTheMaximumThenItGivesUp) {
  DeliveryPolicy p{.max_attempts = 8, .first_retry_s = 30, .max_retry_s = 600};
  EXPECT_EQ(retry_at(1000, 1, p), 1030);
  EXPECT_EQ(retry_at(1000, 2, p), 1060);
  EXPECT_EQ(retry_at(1000, 3, p), 1120);
  EXPECT_EQ(retry_at(1000, 5, p), 1480);
  EXPECT_EQ(retry_at(1000, 6, p), 1600);  // 960 capped at 600
  EXPECT_EQ(retry_at(1000, 7, p), 1600);
  EXPECT_EQ(retry_at(1000, 8, p), std::nullopt);
  EXPECT_EQ(retry_at(1000, 1, DeliveryPolicy{.max_attempts = 1}), std::nullopt);
  EXPECT_EQ(retry_at(1000, 3, DeliveryPolicy{.max_attempts = 5, .first_retry_s = 0}), 1000);
}

// The crash: the message is stored (with the flag it announces) and the
// process dies before sending it. The next start sends it, once; a later
// start sends nothing more.
TEST_F(SenderTest, AMessagePendingAtACrashIsSentAfterTheRestartExactlyOnce) {
  HookReceiver hook;
  auto m = add(hook.url());
  open();  // killed before any POST; restarted
  EXPECT_EQ(round().delivered, 1);
  open();  // and again
  EXPECT_EQ(round().delivered, 0);
  ASSERT_EQ(hook.delivered().size(), 1u);
  EXPECT_EQ(hook.delivered()[0]["message_id"], m.message_id);
  EXPECT_EQ(stored(m.id).attempts, 1);
}

TEST_F(SenderTest, AMessagePendingAtACrashWhoseReceiverFailsFirstIsDeliveredExactlyOnceWhenItRecovers) {
  HookReceiver hook(503);
  auto m = add(hook.url());
  open();
  EXPECT_EQ(round().retrying, 1);
  hook.answer(200);
  open();
  now_ += 30;
  EXPECT_EQ(round().delivered, 1);
  now_ += 3600;
  open();
  round();
  EXPECT_EQ(hook.received().size(), 2u);   // one failed attempt, one success
  EXPECT_EQ(hook.delivered().size(), 1u);  // exactly one delivery
  EXPECT_EQ(stored(m.id).attempts, 2);
  EXPECT_EQ(stored(m.id).state, store::OutboxState::kDelivered);
}

// ---------------------------------------------------------------- the daemon

// Flags raised and stored while the receiver is down: their messages wait in
// the outbox, and the next start delivers them, each once, with the ids
// their failed attempts had.
TEST_F(DaemonTest, AFlagStoredButNotDeliveredIsAnnouncedAfterTheRestartOnce) {
  HookReceiver hook(503);
  std::string a = commit(fake_manifest(), "baseline", {{"src/k.c", "1"}});
  json slow = fake_manifest();
  slow["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.5";
  std::string b = commit(slow, "slower base", {{"src/k.c", "2"}});
  WatchOptions o = options();
  o.since = a;
  o.webhook_url = hook.url();
  o.webhook_delivery.first_retry_s = 0;  // due again at once: the test does not wait
  o.webhook_delivery.max_attempts = 100;
  watch_once(o);
  ASSERT_EQ(flags(store::FlagKind::kRegression).size(), 2u) << log_text();
  EXPECT_TRUE(hook.delivered().empty());
  EXPECT_TRUE(logged("step=webhook flag=")) << log_text();
  EXPECT_TRUE(logged("status=queued")) << log_text();
  store::OutboxFilter pending;
  pending.state = store::OutboxState::kPending;
  auto waiting = store::OutboxReader(*db_).messages(pending);
  ASSERT_TRUE(waiting.has_value());
  ASSERT_EQ(waiting->size(), 2u);
  std::set<std::string> ids;
  for (const auto& m : *waiting) {
    EXPECT_GE(m.attempts, 1);
    EXPECT_EQ(m.commit_sha, b);
    EXPECT_EQ(m.event, "regression");
    ASSERT_TRUE(m.flag_id.has_value());
    ids.insert(m.message_id);
  }

  hook.answer(200);
  log_lines_.clear();
  watch_once(o);  // the restart
  EXPECT_TRUE(logged("step=recover webhooks_pending=2")) << log_text();
  auto delivered = hook.delivered();
  ASSERT_EQ(delivered.size(), 2u) << log_text();
  std::set<std::string> delivered_ids;
  for (const auto& body : delivered) {
    EXPECT_EQ(body["event"], "regression");
    EXPECT_EQ(body["commit"]["sha"], b);
    delivered_ids.insert(body["message_id"].get<std::string>());
  }
  EXPECT_EQ(delivered_ids, ids);
  // Every attempt carried its message's id.
  for (const auto& r : hook.received()) EXPECT_TRUE(ids.contains(r.message_id)) << r.message_id;

  watch_once(o);  // and again: nothing more
  EXPECT_EQ(hook.delivered().size(), 2u);
  auto counts = store::OutboxReader(*db_).counts();
  EXPECT_EQ((*counts)[store::OutboxState::kDelivered], 2);
  EXPECT_EQ((*counts)[store::OutboxState::kPending], 0);
}

// A daemon killed between storing a message and sending it: the row is all
// there is. The next `watch` sends it before it works the queue.
TEST_F(DaemonTest, AMessageAKilledDaemonStoredIsSentByTheNextStartBeforeAnythingElse) {
  HookReceiver hook;
  std::string a = commit(fake_manifest(), "a", {{"src/k.c", "1"}});
  {
    auto other = store::Database::open(state_ / "perfwatch.db");  // the killed daemon's connection
    ASSERT_TRUE(other.has_value());
    store::OutboxMessage m;
    m.url = hook.url();
    m.event = "regression";
    m.commit_sha = a;
    m.body = {{"event", "regression"}, {"text", "stored, never sent"}};
    ASSERT_TRUE(store::OutboxWriter(*other).add(m).has_value());
  }
  WatchOptions o = options();
  o.webhook_url = hook.url();
  watch_once(o);
  ASSERT_EQ(hook.delivered().size(), 1u) << log_text();
  EXPECT_EQ(hook.delivered()[0]["text"], "stored, never sent");
  // Before the queue: the recover lines, the delivery, then the first claim.
  std::size_t delivered_at = 0, claimed_at = 0;
  for (std::size_t i = 0; i < log_lines_.size(); ++i) {
    if (log_lines_[i].find("step=webhook") != std::string::npos && !delivered_at) delivered_at = i + 1;
    if (log_lines_[i].find("step=claim") != std::string::npos && !claimed_at) claimed_at = i + 1;
  }
  EXPECT_GT(delivered_at, 0u);
  EXPECT_LT(delivered_at, claimed_at) << log_text();
  watch_once(o);
  EXPECT_EQ(hook.delivered().size(), 1u);
}

}  // namespace
}  // namespace perfwatch::daemon::testing
