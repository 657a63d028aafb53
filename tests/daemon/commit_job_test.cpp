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
#include "store/run_store.h"
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

  std::string first_point_key() {
    auto points = store::RunReader(*db_).points();
    EXPECT_TRUE(points && !points->empty());
    return points && !points->empty() ? points->front().key : "";
  }

  // Queues a change point's confirmation of `sha` (its first cell), as
  // judging does, runs the queue dry, and expects it done with more runs.
  void confirm_and_expect_it_measured(const std::string& sha) {
    const auto before = env_.bench_calls(sha);
    nlohmann::json cell = {{"variant", "base"}, {"point", first_point_key()}, {"change_point", {{"commit", sha}}}};
    store::JobQueue queue(*db_);
    ASSERT_TRUE(queue
                    .enqueue({.repo_id = repo_,
                              .commit_sha = sha,
                              .branch = "main",
                              .priority = 1,
                              .options = {{"confirm", nlohmann::json::array({cell})}},
                              .again = true})
                    .has_value());
    results_.clear();
    watch();
    ASSERT_EQ(results_.size(), 1u);
    EXPECT_EQ(results_[0].state, store::JobState::kDone) << results_[0].message << "\n" << log_text();
    EXPECT_GT(env_.bench_calls(sha), before) << "the confirmation measured nothing";
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

// A run cut off by the daemon's death or stop is not the commit's doing: it
// takes nothing from the commit's budget. (Counted, a commit whose earlier
// attempts were cut off runs.max_per_commit times was never measured again,
// and its step never flagged; fault_kill_bench found it.)
TEST_F(CommitJobTest, RunsCutOffByTheDaemonDoNotCountAgainstTheRunBudget) {
  for (double v : {100.0, 100.0, 100.0, 115.0}) env_.add_commit(flat(v));
  const std::string stepped = env_.shas()[3];
  auto manifest = env_.manifest(stepped);
  ASSERT_TRUE(manifest.has_value());
  auto commit = record_commit(*db_, repo_, env_, stepped, *manifest);
  ASSERT_TRUE(commit.has_value()) << commit.error().to_string();
  for (int i = 0; i < 8; ++i) {  // the whole budget, cut off by earlier deaths of the daemon
    auto run = store::RunWriter(*db_).start_run({.commit_id = *commit, .purpose = "run 1 of 3", .started_at = 1});
    ASSERT_TRUE(run.has_value()) << run.error().to_string();
    store::RunOutcome cut{.status = store::RunStatus::kCutOff, .message = "the daemon ended while the run was in progress"};
    ASSERT_TRUE(store::RunWriter(*db_).finish_run(*run, cut).has_value());
  }
  watch();
  EXPECT_GE(env_.bench_calls(stepped), 3) << log_text();
  const auto flags = standing_flags();
  ASSERT_EQ(flags.size(), 4u) << log_text();
  for (const auto& f : flags) EXPECT_EQ(f.sha, stepped);
}

// A commit measured after its successor (given up on, then re-queued by a
// person): the successor, judged when it had no predecessor, is judged again
// against it, and the step there is flagged at its commit.
TEST_F(CommitJobTest, ACommitMeasuredAfterItsSuccessorHasTheSuccessorJudgedAgainstIt) {
  env_.add_commit(flat(100));
  env_.add_commit(flat(115));
  store::JobQueue queue(*db_);
  auto run_dry = [&] {
    for (int n = 0; n < 100; ++n) {
      auto job = queue.claim_next();
      ASSERT_TRUE(job.has_value()) << job.error().to_string();
      if (!*job) return;
      auto result = run_commit_job(*ctx_, **job);
      ASSERT_TRUE(result.has_value()) << result.error().to_string();
      ASSERT_TRUE(queue.finish((*job)->id, result->state, result->message).has_value());
    }
    FAIL() << "the queue never ran dry";
  };
  ASSERT_TRUE(queue.enqueue({.repo_id = repo_, .commit_sha = env_.shas()[1], .branch = "main"}).has_value());
  run_dry();
  EXPECT_TRUE(standing_flags().empty()) << "nothing to compare with yet";
  ASSERT_TRUE(queue.enqueue({.repo_id = repo_, .commit_sha = env_.shas()[0], .branch = "main"}).has_value());
  run_dry();
  EXPECT_THAT(log_text(), ::testing::HasSubstr("step=rejudge"));
  const auto flags = standing_flags();
  ASSERT_EQ(flags.size(), 4u) << log_text();
  for (const auto& f : flags) {
    EXPECT_EQ(f.sha, env_.shas()[1]);
    EXPECT_EQ(f.flag.kind, store::FlagKind::kRegression);
  }
  // Judged in order, nothing is queued again.
  const auto before = log_lines_.size();
  env_.add_commit(flat(115));
  ASSERT_TRUE(queue.enqueue({.repo_id = repo_, .commit_sha = env_.shas()[2], .branch = "main"}).has_value());
  run_dry();
  for (auto i = before; i < log_lines_.size(); ++i) EXPECT_THAT(log_lines_[i], ::testing::Not(::testing::HasSubstr("step=rejudge")));
}

// A confirmation of an older commit, once both rotating worktree folders
// hold newer builds: it re-measures the commit and its predecessor A B A B,
// and the two must be built in folders of their own (the leases were taken
// before either build, so both once chose the least recently built folder:
// the predecessor's re-run then found the commit's build there and failed).
TEST_F(CommitJobTest, AConfirmationRebuildsBothSidesInFoldersOfTheirOwn) {
  for (int i = 0; i < 4; ++i) env_.add_commit(flat(100));
  watch();
  for (const auto& r : results_) ASSERT_EQ(r.state, store::JobState::kDone) << r.message;
  confirm_and_expect_it_measured(env_.shas()[1]);
  EXPECT_THAT(log_text(), ::testing::Not(::testing::HasSubstr("build it first")));
}

// With one build folder (watch --build-slots 1) the two sides of that
// confirmation cannot have folders of their own: they take turns, each
// building again where the other built last.
TEST_F(CommitJobTest, WithOneBuildFolderAConfirmationsSidesTakeTurns) {
  options_.build_slots = 1;
  ctx_ = std::make_unique<Context>(*db_, log_, options_, repo_, &env_);
  for (int i = 0; i < 3; ++i) env_.add_commit(flat(100));
  watch();
  for (const auto& r : results_) ASSERT_EQ(r.state, store::JobState::kDone) << r.message;
  confirm_and_expect_it_measured(env_.shas()[1]);
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
