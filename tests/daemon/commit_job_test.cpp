// The commit job in-process against FakeEnv: a history in memory and a
// bench that stores runs directly, so the job's steps, the run plan's budget
// and what judging returns are checked in milliseconds, with no git and no
// child process. (watch_test.cpp runs the same job on real repos and benches.)
#include "daemon/commit_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "store/analysis_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "tests/daemon/fake_env.h"
#include "tests/judge/synthetic_history.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::daemon::testing {
namespace {

using judge::testing::flat;
using judge::testing::SyntheticHistory;

class CommitJobTest : public ::testing::Test {
 protected:
  explicit CommitJobTest(int max_per_commit = 8, double noise = 0.004)
      : env_(SyntheticHistory::manifest(max_per_commit), noise),
        log_([this](std::string_view line) { log_lines_.emplace_back(line); }) {
    auto db = store::Database::open(dir_ / "perfwatch.db");
    EXPECT_TRUE(db.has_value()) << db.error().to_string();
    db_ = std::make_unique<store::Database>(std::move(*db));
    auto repo = store::RepoWriter(*db_).ensure_repo({.path = dir_.path().string(), .name = "fake"});
    EXPECT_TRUE(repo.has_value());
    repo_ = *repo;
    options_.repo = dir_.path();
    options_.branch = "main";
    options_.state_dir = dir_ / "work";
    ctx_ = std::make_unique<Context>(*db_, log_, options_, repo_, &env_);
  }

  // Queues every commit of the fake history, oldest first, and runs the
  // queue dry as the watcher does (confirm jobs first: their priority).
  void watch() {
    store::JobQueue queue(*db_);
    for (const auto& sha : env_.shas()) {
      ASSERT_TRUE(queue.enqueue({.repo_id = repo_, .commit_sha = sha, .branch = "main"}).has_value());
    }
    for (int n = 0; n < 1000; ++n) {
      auto job = queue.claim_next();
      ASSERT_TRUE(job.has_value()) << job.error().to_string();
      if (!*job) return;
      auto result = run_commit_job(*ctx_, **job);
      ASSERT_TRUE(result.has_value()) << result.error().to_string();
      results_.push_back(*result);
      ASSERT_TRUE(queue.finish((*job)->id, result->state, result->message).has_value());
    }
    FAIL() << "the queue never ran dry";
  }

  std::string log_text() const {
    std::string out;
    for (const auto& l : log_lines_) out += l + "\n";
    return out;
  }

  std::vector<store::FlagView> standing_flags() {
    store::FlagFilter f;
    f.limit = 1000;
    auto flags = store::AnalysisReader(*db_).flags(f);
    EXPECT_TRUE(flags.has_value());
    std::vector<store::FlagView> out;
    for (auto& v : *flags)
      if (v.flag.standing()) out.push_back(v);
    return out;
  }

  perfwatch::testing::TempDir dir_{"perfwatch-commit-job"};
  FakeEnv env_;
  std::vector<std::string> log_lines_;
  EventLog log_;
  std::unique_ptr<store::Database> db_;
  store::RepoId repo_ = 0;
  WatchOptions options_;
  std::unique_ptr<Context> ctx_;
  std::vector<JobResult> results_;
};

TEST_F(CommitJobTest, EachCommitIsRunJudgedAndAStepFlaggedAtItsCommitOnly) {
  for (double v : {100.0, 100.0, 100.0, 115.0, 115.0}) env_.add_commit(flat(v));
  watch();
  const auto flags = standing_flags();
  ASSERT_EQ(flags.size(), 4u) << log_text();
  for (const auto& f : flags) {
    EXPECT_EQ(f.sha, env_.shas()[3]);
    EXPECT_EQ(f.flag.kind, store::FlagKind::kRegression);
  }
  for (const auto& sha : env_.shas()) EXPECT_GE(env_.bench_calls(sha), 3) << sha;
}

TEST_F(CommitJobTest, ACommitThatTouchesNoWatchedPathInheritsWithNoBenchProcess) {
  env_.add_commit(flat(100));
  const std::string docs = env_.add_commit(flat(100), /*touches_paths=*/false, "docs only");
  watch();
  EXPECT_EQ(env_.bench_calls(docs), 0);
  EXPECT_EQ(results_[1].state, store::JobState::kDone);
  EXPECT_THAT(results_[1].message, ::testing::HasSubstr("inherits the results of"));
}

TEST_F(CommitJobTest, AStopRequestEndsTheJobBetweenRunsAndLeavesItForTheNextStart) {
  env_.add_commit(flat(100));
  std::atomic<bool> stop{true};
  ctx_->stop = &stop;
  store::JobQueue queue(*db_);
  ASSERT_TRUE(queue.enqueue({.repo_id = repo_, .commit_sha = env_.shas()[0], .branch = "main"}).has_value());
  auto job = queue.claim_next();
  ASSERT_TRUE(job.has_value() && *job);
  auto result = run_commit_job(*ctx_, **job);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->state, store::JobState::kRunning);
  EXPECT_EQ(env_.bench_calls(env_.shas()[0]), 0);
}

// Noisy enough that many comparisons stay undecided and grow, and change
// points ask for confirmations: still no commit gets more bench processes
// than runs.max_per_commit, counting every job's.
class NoisyCommitJobTest : public CommitJobTest {
 protected:
  NoisyCommitJobTest() : CommitJobTest(/*max_per_commit=*/8, /*noise=*/0.06) {}
};

TEST_F(NoisyCommitJobTest, TheRunBudgetIsAHardCapPerCommitConfirmationsIncluded) {
  for (int i = 0; i < 40; ++i) {
    const double v = 100.0 * (i >= 20 ? 1.06 : 1.0) * (i >= 30 ? 1.04 : 1.0);
    env_.add_commit(flat(v));
  }
  watch();
  int grown = 0;
  for (const auto& sha : env_.shas()) {
    EXPECT_LE(env_.bench_calls(sha), 8) << sha;
    grown += env_.bench_calls(sha) > 3;
  }
  EXPECT_GT(grown, 0) << "the test means nothing unless some comparisons grew";
}

}  // namespace
}  // namespace perfwatch::daemon::testing
