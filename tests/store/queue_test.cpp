// The job queue: no duplicates, claim order, transitions, and recovery after
// the daemon is killed -- including a real kill -9 of a process mid-run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>

#include <gtest/gtest.h>

#include "store/detail/statement.h"
#include "store/migrations.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

class Queue : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Database::open(tmp_.path());
    ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
    db_ = std::make_unique<Database>(std::move(*opened));
    auto repo = RepoWriter(*db_).ensure_repo({.path = "/r", .name = "r"});
    ASSERT_TRUE(repo.has_value());
    repo_ = *repo;
  }
  JobRequest request(int i, JobKind kind = JobKind::kBench, std::int64_t priority = 0) {
    return {.repo_id = repo_, .commit_sha = testing::sha_of(i), .branch = "main", .kind = kind, .priority = priority};
  }
  TempDbPath tmp_;
  std::unique_ptr<Database> db_;
  RepoId repo_ = 0;
};

TEST_F(Queue, EnqueueingTheSameCommitTwiceDoesNotDuplicate) {
  JobQueue q(*db_);
  PW_UNWRAP(first, q.enqueue(request(1)));
  EXPECT_TRUE(first.created);
  PW_UNWRAP(second, q.enqueue(request(1)));
  EXPECT_FALSE(second.created);
  EXPECT_EQ(second.id, first.id);
  // Back-fill of the same commit is the same work.
  PW_UNWRAP(backfill, q.enqueue(request(1, JobKind::kBackfill)));
  EXPECT_FALSE(backfill.created);
  EXPECT_EQ(backfill.id, first.id);
  // Noise calibration is other work.
  PW_UNWRAP(noise, q.enqueue(request(1, JobKind::kNoise)));
  EXPECT_TRUE(noise.created);
  // Once done, enqueueing again still finds it -- unless asked `again`.
  PW_UNWRAP(claimed, q.claim_next());
  ASSERT_TRUE(claimed.has_value());
  PW_ASSERT_OK(q.finish(claimed->id, JobState::kDone, "ok"));
  PW_UNWRAP(after_done, q.enqueue(request(1)));
  EXPECT_FALSE(after_done.created);
  auto again = request(1);
  again.again = true;
  PW_UNWRAP(repeat, q.enqueue(again));
  EXPECT_TRUE(repeat.created);
  PW_UNWRAP(repeat_twice, q.enqueue(again));  // but never two live ones
  EXPECT_FALSE(repeat_twice.created);
  EXPECT_EQ(repeat_twice.id, repeat.id);
  PW_UNWRAP(counts, JobReader(*db_).counts());
  EXPECT_EQ(counts[JobState::kQueued], 2);  // the noise job and the repeat
  EXPECT_EQ(counts[JobState::kDone], 1);
}

TEST_F(Queue, TheDatabaseItselfRefusesASecondLiveJob) {
  // Even a writer that skipped enqueue()'s check could not duplicate: the
  // partial unique index is in the schema.
  JobQueue q(*db_);
  PW_ASSERT_OK(q.enqueue(request(1)));
  auto raw = detail::guard(*db_, "raw insert", [&] {
    detail::Query insert(*db_,
                         "INSERT INTO jobs (repo_id, commit_sha, kind, enqueued_at) VALUES (:repo, :sha, 'backfill', 0)");
    insert->bind(":repo", repo_).bind(":sha", testing::sha_of(1));
    insert->run();
  });
  ASSERT_FALSE(raw.has_value());
  EXPECT_EQ(raw.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(Queue, ClaimsByPriorityThenInOrder) {
  JobQueue q(*db_);
  PW_ASSERT_OK(q.enqueue(request(1)));
  PW_ASSERT_OK(q.enqueue(request(2)));
  PW_ASSERT_OK(q.enqueue(request(3, JobKind::kBackfill, -10)));
  PW_ASSERT_OK(q.enqueue(request(4, JobKind::kBench, 10)));
  PW_ASSERT_OK(q.enqueue(request(5)));
  std::vector<std::string> order;
  for (;;) {
    PW_UNWRAP(job, q.claim_next());
    if (!job) break;
    EXPECT_EQ(job->state, JobState::kRunning);
    EXPECT_EQ(job->attempts, 1);
    ASSERT_TRUE(job->started_at.has_value());
    order.push_back(job->commit_sha);
    PW_ASSERT_OK(q.finish(job->id, JobState::kDone, ""));
  }
  EXPECT_EQ(order, (std::vector<std::string>{testing::sha_of(4), testing::sha_of(1), testing::sha_of(2),
                                             testing::sha_of(5), testing::sha_of(3)}));
}

TEST_F(Queue, FinishAllowsOnlyRealTransitions) {
  JobQueue q(*db_);
  PW_UNWRAP(a, q.enqueue(request(1)));
  PW_UNWRAP(b, q.enqueue(request(2)));
  EXPECT_EQ(q.finish(a.id, JobState::kDone, "").error().code, ErrorCode::kInvalidArgument);  // not running
  PW_ASSERT_OK(q.finish(a.id, JobState::kSkipped, "commit no longer exists (force-push)"));
  EXPECT_EQ(q.finish(a.id, JobState::kSkipped, "").error().code, ErrorCode::kInvalidArgument);
  PW_UNWRAP(claimed, q.claim_next());
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->id, b.id);
  EXPECT_EQ(q.finish(b.id, JobState::kQueued, "").error().code, ErrorCode::kInvalidArgument);
  PW_ASSERT_OK(q.finish(b.id, JobState::kFailed, "build failed"));
  EXPECT_EQ(q.finish(999, JobState::kDone, "").error().code, ErrorCode::kNotFound);
  PW_UNWRAP(job, JobReader(*db_).job(b.id));
  EXPECT_EQ(job.state, JobState::kFailed);
  EXPECT_EQ(job.message, "build failed");
  EXPECT_TRUE(job.finished_at.has_value());
}

TEST_F(Queue, RecoveryMarksRunningJobsAndRunsCutOffAndRequeuesExactlyOnce) {
  JobQueue q(*db_);
  RunWriter runs(*db_);
  PW_UNWRAP(commit, RepoWriter(*db_).put_commit({.repo_id = repo_, .sha = testing::sha_of(1)}));
  PW_UNWRAP(first, q.enqueue(request(1)));
  PW_ASSERT_OK(q.enqueue(request(2)));
  PW_UNWRAP(job, q.claim_next());
  ASSERT_EQ(job->id, first.id);
  // The daemon ran one run to the end and was killed during the second.
  PW_UNWRAP(done_run, runs.start_run({.commit_id = commit, .job_id = job->id}));
  PW_ASSERT_OK(runs.finish_run(done_run, {.status = RunStatus::kOk}));
  PW_UNWRAP(cut_run, runs.start_run({.commit_id = commit, .job_id = job->id}));
  PW_UNWRAP(v, runs.add_variant({.run_id = cut_run, .name = "base"}));
  PW_UNWRAP(p, runs.ensure_point(testing::point_record(1)));
  PW_ASSERT_OK(runs.insert_trial(testing::trial_record(cut_run, v, p, 1, 3.0)));
  PW_UNWRAP(later, q.enqueue(request(3)));  // enqueued while the first was running

  // The daemon restarts.
  PW_UNWRAP(recovery, q.recover_after_crash());
  EXPECT_EQ(recovery.cut_off, std::vector<JobId>{first.id});
  EXPECT_EQ(recovery.runs_cut_off, std::vector<RunId>{cut_run});
  ASSERT_EQ(recovery.requeued.size(), 1u);
  JobReader reader(*db_);
  PW_UNWRAP(old_job, reader.job(first.id));
  EXPECT_EQ(old_job.state, JobState::kCutOff);
  EXPECT_EQ(old_job.run_ids, (std::vector<RunId>{done_run, cut_run}));
  PW_UNWRAP(retry, reader.job(recovery.requeued[0]));
  EXPECT_EQ(retry.state, JobState::kQueued);
  EXPECT_EQ(retry.retry_of, first.id);
  EXPECT_EQ(retry.attempts, 1);
  EXPECT_EQ(retry.commit_sha, testing::sha_of(1));
  RunReader run_reader(*db_);
  PW_UNWRAP(cut, run_reader.run(cut_run));
  EXPECT_EQ(cut.status, RunStatus::kCutOff);
  EXPECT_EQ(cut.trial_count, 1);
  EXPECT_NE(cut.message.find("cut off"), std::string::npos);
  EXPECT_TRUE(cut.finished_at.has_value());
  EXPECT_EQ(run_reader.run(done_run)->status, RunStatus::kOk);  // a finished run is left alone
  EXPECT_EQ(runs.finish_run(cut_run, {.status = RunStatus::kOk}).error().code, ErrorCode::kInvalidArgument);

  // Exactly once: a second recovery finds nothing.
  PW_UNWRAP(second, q.recover_after_crash());
  EXPECT_TRUE(second.cut_off.empty());
  EXPECT_TRUE(second.requeued.empty());
  EXPECT_TRUE(second.runs_cut_off.empty());
  PW_UNWRAP(counts, reader.counts());
  EXPECT_EQ(counts[JobState::kQueued], 3);  // the retry, job 2, job 3
  EXPECT_EQ(counts[JobState::kRunning], 0);
  EXPECT_EQ(counts[JobState::kCutOff], 1);
  // Enqueueing the commit again finds the retry.
  PW_UNWRAP(dup, q.enqueue(request(1)));
  EXPECT_FALSE(dup.created);
  EXPECT_EQ(dup.id, retry.id);
  // The retry keeps the first job's place: before jobs 2 and 3.
  PW_UNWRAP(next, q.claim_next());
  EXPECT_EQ(next->id, retry.id);
  EXPECT_EQ(next->attempts, 2);
  (void)later;
}

TEST_F(Queue, AJobCutOffMaxAttemptsTimesIsGivenUpAndSaysSo) {
  JobQueue q(*db_);
  PW_ASSERT_OK(q.enqueue(request(1)));
  JobId last = 0;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    PW_UNWRAP(job, q.claim_next());
    ASSERT_TRUE(job.has_value()) << "attempt " << attempt;
    EXPECT_EQ(job->attempts, attempt);
    last = job->id;
    PW_UNWRAP(recovery, q.recover_after_crash(/*max_attempts=*/3));
    EXPECT_EQ(recovery.requeued.size(), attempt < 3 ? 1u : 0u);
    EXPECT_EQ(recovery.cut_off.size(), attempt < 3 ? 1u : 0u);
    EXPECT_EQ(recovery.gave_up.size(), attempt < 3 ? 0u : 1u);
  }
  PW_UNWRAP(nothing, q.claim_next());
  EXPECT_FALSE(nothing.has_value());
  PW_UNWRAP(counts, JobReader(*db_).counts());
  EXPECT_EQ(counts[JobState::kCutOff], 2);
  EXPECT_EQ(counts[JobState::kGaveUp], 1);
  PW_UNWRAP(given_up, JobReader(*db_).job(last));
  EXPECT_EQ(given_up.state, JobState::kGaveUp);
  EXPECT_EQ(given_up.attempts, 3);
  EXPECT_TRUE(given_up.finished_at.has_value());
  EXPECT_EQ(given_up.message.rfind("gave up after 3 attempt(s), each cut off (0 interruption(s) by a stop not counted): "
                                   "cut off: the daemon stopped while job " + std::to_string(last) + " was running", 0),
            0u)
      << given_up.message;
  // Listed by its state.
  JobFilter f;
  f.state = JobState::kGaveUp;
  PW_UNWRAP(listed, JobReader(*db_).jobs(f));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, last);
}

// Cut off three times, then re-queued by hand: one new job, with
// max_attempts of its own; the given-up job stays as the record of it.
TEST_F(Queue, ACommitGivenUpOnIsRequeuedByHandOnce) {
  JobQueue q(*db_);
  PW_ASSERT_OK(q.enqueue(request(1)));
  PW_ASSERT_OK(q.enqueue(request(2)));
  JobId given_up = 0;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    PW_UNWRAP(job, q.claim_next());
    ASSERT_EQ(job->commit_sha, testing::sha_of(1));
    PW_UNWRAP(recovery, q.recover_after_crash(3));
    if (attempt == 3) given_up = recovery.gave_up.at(0).id;
  }
  // By its sha, upper case too.
  std::string prefix = testing::sha_of(1);
  for (char& c : prefix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  PW_UNWRAP(requeued, q.requeue(repo_, prefix, "alice"));
  EXPECT_EQ(requeued.given_up.id, given_up);
  // Redone now: cut_off, as a job redone after a crash is, saying by whom.
  EXPECT_EQ(requeued.given_up.state, JobState::kCutOff);
  EXPECT_NE(requeued.given_up.message.find("gave up after 3 attempt(s)"), std::string::npos);
  EXPECT_NE(requeued.given_up.message.find("; re-queued by alice as job " + std::to_string(requeued.job.id)),
            std::string::npos)
      << requeued.given_up.message;
  EXPECT_EQ(requeued.job.state, JobState::kQueued);
  EXPECT_EQ(requeued.job.retry_of, given_up);
  EXPECT_EQ(requeued.job.attempts, 0);
  EXPECT_EQ(requeued.job.stops, 0);
  EXPECT_EQ(requeued.job.commit_sha, testing::sha_of(1));
  EXPECT_EQ(requeued.job.branch, "main");
  EXPECT_EQ(requeued.job.message, "re-queued by alice: redoes job " + std::to_string(given_up) + ", which was given up on");
  EXPECT_EQ(JobReader(*db_).counts()->at(JobState::kGaveUp), 0);
  // Once: it is queued now.
  auto twice = q.requeue(repo_, testing::sha_of(1), "alice");
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(twice.error().message.find("no job of it was given up: its newest job, " +
                                       std::to_string(requeued.job.id) + ", is queued"),
            std::string::npos)
      << twice.error().message;
  // Its old place in the queue: before commit 2.
  PW_UNWRAP(next, q.claim_next());
  EXPECT_EQ(next->id, requeued.job.id);
  EXPECT_EQ(next->attempts, 1);
  // Given up again after three more: re-queued again.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    PW_UNWRAP(recovery, q.recover_after_crash(3));
    EXPECT_EQ(recovery.gave_up.size(), attempt == 3 ? 1u : 0u);
    if (attempt < 3) {
      PW_UNWRAP(again, q.claim_next());
      EXPECT_EQ(again->commit_sha, testing::sha_of(1));
    }
  }
  PW_UNWRAP(second, q.requeue(std::nullopt, testing::sha_of(1), ""));
  EXPECT_NE(second.given_up.id, given_up);
  EXPECT_EQ(second.job.retry_of, second.given_up.id);
  EXPECT_NE(second.job.message.find("re-queued by hand"), std::string::npos);
}

TEST_F(Queue, RequeueRefusesWhatIsNotAGivenUpCommitWithAClearError) {
  JobQueue q(*db_);
  PW_ASSERT_OK(q.enqueue(request(1)));
  PW_UNWRAP(job, q.claim_next());
  PW_ASSERT_OK(q.finish(job->id, JobState::kDone, "3 ok run(s)"));
  auto done = q.requeue(repo_, testing::sha_of(1), "bob");
  ASSERT_FALSE(done.has_value());
  EXPECT_EQ(done.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(done.error().message.find("is done (only a given-up job is re-queued)"), std::string::npos)
      << done.error().message;
  auto unknown = q.requeue(repo_, "deadbeef", "bob");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(unknown.error().message.find("commit deadbeef: no job of this commit"), std::string::npos);
  for (const char* bad : {"", "abc", "xyz123456", "c0de'; DROP TABLE jobs; --"}) {
    auto refused = q.requeue(repo_, bad, "bob");
    ASSERT_FALSE(refused.has_value()) << bad;
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(refused.error().message.find("must be a sha or a prefix of 4 to 64 hex digits"), std::string::npos);
  }
  // A prefix of two commits names neither.
  PW_ASSERT_OK(q.enqueue(request(2)));
  auto ambiguous = q.requeue(repo_, testing::sha_of(1).substr(0, 8), "bob");
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_NE(ambiguous.error().message.find("names several commits"), std::string::npos) << ambiguous.error().message;
}

// A database of schema version 6: a job cut off max_attempts times stayed
// cut_off with nothing redoing it. Migrating it says what it was: gave_up.
TEST(QueueMigration, CutOffJobsThatNothingRedoesBecomeGivenUpAndEveryRowIsKept) {
  TempDbPath tmp;
  JobId given_up = 0, redone = 0, retry = 0;
  RunId run = 0;
  {
    PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 6}));
    PW_UNWRAP(repo, RepoWriter(db).ensure_repo({.path = "/r", .name = "r"}));
    PW_UNWRAP(commit, RepoWriter(db).put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
    // As version 6 wrote them (today's writers name columns of version 10):
    // a (3 attempts) cut off and not redone; b cut off and redone.
    given_up = 1;
    redone = 2;
    run = 1;
    auto raw = detail::guard(db, "v6 jobs", [&] {
      detail::Access::exec(db, "INSERT INTO jobs (id, repo_id, commit_sha, branch, kind, enqueued_at) VALUES (1, " +
                                   std::to_string(repo) + ", '" + testing::sha_of(1) + "', 'main', 'bench', 0), (2, " +
                                   std::to_string(repo) + ", '" + testing::sha_of(2) + "', 'main', 'bench', 0)");
      detail::Access::exec(db, "INSERT INTO runs (id, commit_id, job_id, kind, status, started_at) VALUES (1, " +
                                   std::to_string(commit) + ", 1, 'bench', 'running', 0)");
      detail::Access::exec(db, "UPDATE jobs SET state = 'cut_off', attempts = 3, message = 'cut off: the daemon "
                               "stopped while job 1 was running' WHERE id = " + std::to_string(given_up));
      detail::Access::exec(db, "UPDATE jobs SET state = 'cut_off', attempts = 1 WHERE id = " + std::to_string(redone));
      detail::Query q2(db, "INSERT INTO jobs (repo_id, commit_sha, branch, kind, attempts, retry_of, enqueued_at) "
                           "VALUES (:repo, :sha, 'main', 'bench', 1, :retry_of, 0) RETURNING id");
      q2->bind(":repo", repo).bind(":sha", testing::sha_of(2)).bind(":retry_of", redone);
      return q2->returning<JobId>("id");
    });
    ASSERT_TRUE(raw.has_value()) << raw.error().to_string();
    retry = *raw;
  }
  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  JobReader reader(db);
  PW_UNWRAP(a, reader.job(given_up));
  EXPECT_EQ(a.state, JobState::kGaveUp);
  EXPECT_EQ(a.message, "gave up after 3 attempt(s), each cut off (0 interruption(s) by a stop not counted): cut off: "
                       "the daemon stopped while job 1 was running");
  EXPECT_EQ(a.run_ids, std::vector<RunId>{run});  // runs.job_id still finds it
  EXPECT_EQ(reader.job(redone)->state, JobState::kCutOff);
  EXPECT_EQ(reader.job(retry)->retry_of, redone);
  // The rebuilt table keeps its rules: no second live job of one commit.
  PW_UNWRAP(dup, JobQueue(db).enqueue({.repo_id = 1, .commit_sha = testing::sha_of(2), .branch = "main"}));
  EXPECT_FALSE(dup.created);
  EXPECT_EQ(dup.id, retry);
  // And foreign keys are on again, and hold.
  auto orphan = detail::guard(db, "orphan run", [&] {
    detail::Access::exec(db, "UPDATE runs SET job_id = 999 WHERE id = " + std::to_string(run));
  });
  EXPECT_FALSE(orphan.has_value());
  PW_UNWRAP(requeued, JobQueue(db).requeue(std::nullopt, testing::sha_of(1), "migration test"));
  EXPECT_EQ(requeued.given_up.id, given_up);
}

// A real crash: a child process claims the job, starts a run, stores five
// trials and is killed with SIGKILL. The parent then recovers.
TEST_F(Queue, KillNineMidRunLosesNoTrialAndRequeuesTheJob) {
  PW_UNWRAP(commit, RepoWriter(*db_).put_commit({.repo_id = repo_, .sha = testing::sha_of(1)}));
  PW_UNWRAP(job, JobQueue(*db_).enqueue(request(1)));
  db_.reset();  // no connection crosses the fork

  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    auto db = Database::open(tmp_.path());
    if (!db) _exit(10);
    auto claimed = JobQueue(*db).claim_next();
    if (!claimed || !*claimed) _exit(11);
    RunWriter runs(*db);
    auto run = runs.start_run({.commit_id = commit, .job_id = (*claimed)->id});
    if (!run) _exit(12);
    auto v = runs.add_variant({.run_id = *run, .name = "base"});
    auto p = runs.ensure_point(testing::point_record(1));
    if (!v || !p) _exit(13);
    for (int i = 1; i <= 5; ++i)
      if (!runs.insert_trial(testing::trial_record(*run, *v, *p, i, 2.0 + i))) _exit(14);
    char byte = 'k';
    if (write(ready[1], &byte, 1) != 1) _exit(15);
    for (;;) pause();  // killed here, the database still open
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the child failed before its trials were stored";
  close(ready[0]);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  PW_UNWRAP(db, Database::open(tmp_.path()));
  PW_UNWRAP(recovery, JobQueue(db).recover_after_crash());
  ASSERT_EQ(recovery.cut_off, std::vector<JobId>{job.id});
  ASSERT_EQ(recovery.runs_cut_off.size(), 1u);
  ASSERT_EQ(recovery.requeued.size(), 1u);
  RunReader reader(db);
  PW_UNWRAP(run, reader.run(recovery.runs_cut_off[0]));
  EXPECT_EQ(run.status, RunStatus::kCutOff);
  EXPECT_EQ(run.trial_count, 5);
  PW_UNWRAP(trials, reader.trials(run.id));
  ASSERT_EQ(trials.size(), 5u);
  EXPECT_DOUBLE_EQ(trials[4].metrics.at("time_us"), 7.0);
}

}  // namespace
}  // namespace perfwatch::store
