// kill -9 of a real `perfwatch watch` in the middle of a run, then a restart:
// nothing measured is lost, nothing is measured twice, the run that was cut
// off is marked so and redone. The kill waits for an observable state in the
// database (a run in progress with trials stored), never for a sleep.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gmock/gmock.h>

#include "store/history_store.h"
#include "tests/daemon/daemon_fixture.h"

extern char** environ;

namespace perfwatch::daemon::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Starts perfwatch with these arguments, stderr (its event log) to `log`.
pid_t spawn_perfwatch(const std::vector<std::string>& args, const std::filesystem::path& log) {
  std::vector<char*> argv;
  std::string bin = PERFWATCH_BIN;
  argv.push_back(bin.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class RestartTest : public DaemonTest {
 protected:
  // The fake bench with its output slowed to ~20 lines a second, so a run
  // lasts about a second and can be caught in progress.
  json slow_manifest() {
    json m = fake_manifest();
    m["bench"]["command"] = std::string(FAKE_BENCH_PATH) +
                            " | while IFS= read -r line; do printf '%s\\n' \"$line\"; sleep 0.05; done";
    return m;
  }
  std::vector<std::string> watch_args(const std::string& since) {
    return {"--db", (state_ / "perfwatch.db").string(), "--state-dir", (state_ / "work").string(), "watch",
            "--repo", repo_.path().string(), "--branch", "main", "--since", since, "--once"};
  }

  // Waits until a run of `sha`'s job numbered `nth` (1-based) is in
  // progress with at least 3 trials stored; returns its id (0: never seen).
  store::RunId wait_for_run_in_progress(const std::string& sha, std::size_t nth) {
    auto reader = store::Database::open_read_only(state_ / "perfwatch.db");
    for (int i = 0; i < 600 && !reader; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      reader = store::Database::open_read_only(state_ / "perfwatch.db");
    }
    if (!reader) return 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      store::JobFilter running;
      running.state = store::JobState::kRunning;
      auto jobs = store::JobReader(*reader).jobs(running);
      if (jobs && jobs->size() == 1 && (*jobs)[0].commit_sha == sha && (*jobs)[0].run_ids.size() >= nth) {
        store::RunId id = (*jobs)[0].run_ids.back();
        auto run = store::RunReader(*reader).run(id);
        auto trials = store::RunReader(*reader).trial_count(id);
        if (run && run->status == store::RunStatus::kRunning && trials && *trials >= 3) return id;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }
};

TEST_F(RestartTest, SigtermStopsAfterTheRunInProgressAndTheNextStartRedoesTheJob) {
  std::string a = commit(slow_manifest(), "a", {{"src/k.c", "1"}});
  const auto log = state_ / "watch.log";
  pid_t pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_GT(pid, 0);
  store::RunId in_progress = wait_for_run_in_progress(a, 1);
  ASSERT_NE(in_progress, 0) << perfwatch::testing::read_file(log);
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  // The run in progress finished; no other started; the job waits for the next start.
  auto runs = runs_of(a);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, store::RunStatus::kOk);
  EXPECT_EQ(jobs_of(a)[0].state, store::JobState::kRunning);
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("step=interrupted"));

  pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  int ok = 0;
  for (const auto& r : runs_of(a)) ok += r.status == store::RunStatus::kOk;
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(runs_of(a).size(), 3u);
  EXPECT_EQ(jobs_of(a)[0].state, store::JobState::kDone);
}

TEST_F(RestartTest, KillNineMidRunThenRestartLosesNothingAndDuplicatesNothing) {
  std::string a = commit(slow_manifest(), "a", {{"src/k.c", "1"}});
  std::string b = commit(slow_manifest(), "b", {{"src/k.c", "2"}});
  const auto log = state_ / "watch.log";
  pid_t pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_GT(pid, 0);

  // Wait until the second run of the first commit is in progress with
  // trials stored (the first run is then done and must be kept as it is).
  auto reader = store::Database::open_read_only(state_ / "perfwatch.db");
  for (int i = 0; i < 600 && !reader; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    reader = store::Database::open_read_only(state_ / "perfwatch.db");
  }
  ASSERT_TRUE(reader.has_value()) << reader.error().to_string();
  store::RunId cut = 0;
  std::int64_t trials_at_kill = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!cut && std::chrono::steady_clock::now() < deadline) {
    store::JobFilter running;
    running.state = store::JobState::kRunning;
    auto jobs = store::JobReader(*reader).jobs(running);
    if (jobs && jobs->size() == 1 && (*jobs)[0].commit_sha == a && (*jobs)[0].run_ids.size() >= 2) {
      auto run = store::RunReader(*reader).run((*jobs)[0].run_ids.back());
      auto trials = store::RunReader(*reader).trial_count((*jobs)[0].run_ids.back());
      if (run && run->status == store::RunStatus::kRunning && trials && *trials >= 3) {
        ASSERT_EQ(kill(pid, SIGKILL), 0);
        cut = run->id;
      }
    }
    if (!cut) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(cut, 0) << "never saw a run in progress; log:\n" << perfwatch::testing::read_file(log);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  trials_at_kill = *store::RunReader(*db_).trial_count(cut);
  ASSERT_GE(trials_at_kill, 3);
  std::vector<store::RunRecord> before = runs_of(a);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].status, store::RunStatus::kOk);

  // Restart: recovers, redoes the cut-off job, finishes the queue.
  pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  const std::string text = perfwatch::testing::read_file(log);
  EXPECT_THAT(text, HasSubstr("step=recover run=" + std::to_string(cut) + " status=cut_off"));

  // The cut-off run: marked, its trials kept.
  auto cut_run = store::RunReader(*db_).run(cut);
  ASSERT_TRUE(cut_run.has_value());
  EXPECT_EQ(cut_run->status, store::RunStatus::kCutOff);
  EXPECT_GE(*store::RunReader(*db_).trial_count(cut), trials_at_kill);
  // The run done before the kill is the same run, untouched; exactly three ok runs each.
  auto after = runs_of(a);
  EXPECT_EQ(after[0], before[0]);
  int ok_a = 0, ok_b = 0;
  for (const auto& r : after) ok_a += r.status == store::RunStatus::kOk;
  for (const auto& r : runs_of(b)) ok_b += r.status == store::RunStatus::kOk;
  EXPECT_EQ(ok_a, 3);
  EXPECT_EQ(ok_b, 3);
  EXPECT_EQ(after.size(), 4u);  // 3 ok + the cut-off one
  for (const auto& r : after) {
    if (r.status == store::RunStatus::kOk) {
      EXPECT_EQ(r.trial_count, 12);
    }
  }
  // The jobs: the killed one cut off, redone once, the queue empty.
  auto jobs = jobs_of(a);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].state, store::JobState::kCutOff);
  EXPECT_EQ(jobs[0].state, store::JobState::kDone);
  EXPECT_EQ(jobs[0].retry_of, jobs[1].id);
  auto counts = store::JobReader(*db_).counts();
  EXPECT_EQ((*counts)[store::JobState::kQueued], 0);
  EXPECT_EQ((*counts)[store::JobState::kRunning], 0);
  // Judged once: one comparison per cell, the pooled values from the three ok runs.
  auto cmp = store::AnalysisReader(*db_).comparisons_of_commit(commit_record(b).id);
  ASSERT_TRUE(cmp.has_value());
  EXPECT_EQ(cmp->size(), 4u);
  auto summaries = store::AnalysisReader(*db_).commit_summaries(commit_record(a).id);
  ASSERT_TRUE(summaries.has_value());
  for (const auto& s : *summaries) EXPECT_EQ(s.runs, 3);
}

}  // namespace
}  // namespace perfwatch::daemon::testing
