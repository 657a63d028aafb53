// A commit given up on: cut off max_attempts times (a daemon killed while
// its job ran, again and again), it is not redone by itself, and says so --
// its job's state, a log line naming how to re-queue it -- until a person
// re-queues it; then it is measured like any other.
#include <gmock/gmock.h>

#include "tests/daemon/daemon_fixture.h"

namespace perfwatch::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(DaemonTest, ACommitCutOffMaxAttemptsTimesIsGivenUpVisibleAndRequeuedByHand) {
  std::string a = commit(fake_manifest(), "a", {{"src/k.c", "1"}});
  WatchOptions o = options();
  auto w = open_watcher(o);
  ASSERT_TRUE(w);
  auto polled = w->poll();
  ASSERT_TRUE(polled.has_value()) << polled.error().to_string();
  // Three daemons killed while the job ran: each start finds it running.
  for (int crash = 1; crash <= o.max_attempts; ++crash) {
    auto claimed = store::JobQueue(*db_).claim_next();
    ASSERT_TRUE(claimed && *claimed) << "crash " << crash;
    ASSERT_EQ((*claimed)->commit_sha, a);
    PW_ASSERT_OK(w->recover());
  }
  auto jobs = jobs_of(a);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].state, store::JobState::kGaveUp);
  EXPECT_EQ(jobs[0].attempts, 3);
  EXPECT_THAT(jobs[0].message, HasSubstr("gave up after 3 attempt(s), each cut off"));
  EXPECT_TRUE(logged("commit=" + a.substr(0, 10) + " step=recover job=" + std::to_string(jobs[0].id) +
                     " status=gave_up attempts=3 stops=0 requeue_with=\"perfwatch jobs requeue " + a.substr(0, 10) +
                     "\""))
      << log_text();

  // Not redone by itself, however often the daemon starts.
  watch_once(o);
  watch_once(o);
  EXPECT_EQ(jobs_of(a).size(), 3u);
  EXPECT_EQ(jobs_of(a)[0].state, store::JobState::kGaveUp);

  auto requeued = store::JobQueue(*db_).requeue(std::nullopt, a.substr(0, 10), "test");
  ASSERT_TRUE(requeued.has_value()) << requeued.error().to_string();
  watch_once(o);
  jobs = jobs_of(a);
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].state, store::JobState::kDone) << jobs[0].message;
  EXPECT_EQ(jobs[0].retry_of, jobs[1].id);
  // What happened stays on record: given up, then re-queued.
  EXPECT_EQ(jobs[1].state, store::JobState::kCutOff);
  EXPECT_THAT(jobs[1].message, HasSubstr("gave up after 3 attempt(s)"));
  EXPECT_THAT(jobs[1].message, HasSubstr("re-queued by test as job " + std::to_string(jobs[0].id)));
  int ok = 0;
  for (const auto& r : runs_of(a)) ok += r.status == store::RunStatus::kOk;
  EXPECT_EQ(ok, 3);
}

}  // namespace
}  // namespace perfwatch::daemon::testing
