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
#include <set>
#include <thread>

#include <gmock/gmock.h>

#include "runner/process_groups.h"
#include "store/history_store.h"
#include "store/outbox_store.h"
#include "store/process_store.h"
#include "tests/daemon/daemon_fixture.h"
#include "tests/daemon/hook_receiver.h"

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

// As wait_exit, but a process still running after `seconds` is killed and -1 returned.
int wait_exit_within(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
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

  // The runs of `sha` (any, job or not), newest first, read through the test's connection.
  std::vector<store::RunRecord> runs_of_repo_head(const std::string& sha) {
    auto repos = store::RepoReader(*db_).repos();
    if (!repos || repos->empty()) return {};
    auto c = store::RepoReader(*db_).find_commit(repos->front().id, sha);
    if (!c || !*c) return {};
    auto runs = store::RunReader(*db_).runs_of_commit((*c)->id);
    if (!runs) return {};
    std::vector<store::RunRecord> out(runs->rbegin(), runs->rend());
    return out;
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

TEST_F(RestartTest, SigtermEndsTheRunInProgressAndTheNextStartRedoesTheJob) {
  std::string a = commit(slow_manifest(), "a", {{"src/k.c", "1"}});
  const auto log = state_ / "watch.log";
  pid_t pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_GT(pid, 0);
  store::RunId in_progress = wait_for_run_in_progress(a, 1);
  ASSERT_NE(in_progress, 0) << perfwatch::testing::read_file(log);
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  EXPECT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  // The run in progress was cut off (its bench ended), no other started; the
  // job waits for the next start, and the stop is not counted as an attempt.
  auto runs = runs_of(a);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, store::RunStatus::kCutOff);
  EXPECT_EQ(jobs_of(a)[0].state, store::JobState::kRunning);
  EXPECT_EQ(jobs_of(a)[0].stops, 1);
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("step=interrupted"));
  EXPECT_TRUE(*store::ProcessStore(*db_).groups_on(runner::host_name()) == std::vector<store::ChildGroupRecord>{});

  pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  int ok = 0;
  for (const auto& r : runs_of(a)) ok += r.status == store::RunStatus::kOk;
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(runs_of(a).size(), 4u);  // 3 ok + the cut-off one
  auto jobs = jobs_of(a);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].state, store::JobState::kDone);
  EXPECT_EQ(jobs[0].stops, 1);  // carried over to the redo
}

// A bench that hangs (writes nothing for its 300 s idle timeout) does not
// hold a SIGTERM up: its group is ended and the daemon exits.
TEST_F(RestartTest, SigtermStopsAHungBench) {
  json m = fake_manifest();
  m["bench"]["idle_timeout_s"] = 300;
  m["bench"]["env"] = {{"FAKE_BENCH", "hang_after=3"}};
  std::string a = commit(m, "a", {{"src/k.c", "1"}});
  const auto log = state_ / "watch.log";
  pid_t pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_GT(pid, 0);
  ASSERT_NE(wait_for_run_in_progress(a, 1), 0u) << perfwatch::testing::read_file(log);
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  // Bounded: well under the idle timeout (the service manager's 90 s).
  EXPECT_EQ(wait_exit_within(pid, 60), 0) << perfwatch::testing::read_file(log);
  EXPECT_EQ(runs_of(a)[0].status, store::RunStatus::kCutOff);
}

// kill -9 while a build runs: the build's shell dies with the daemon
// (PR_SET_PDEATHSIG); what it started lives on in its process group until the
// restarted daemon ends it, before it checks anything out.
TEST_F(RestartTest, KillNineDuringABuildThenRestartEndsWhatTheBuildLeft) {
  const auto hang = state_ / "hang";
  const auto pid_file = state_ / "build-grandchild.pid";
  perfwatch::testing::write_file(hang, "");
  json m = fake_manifest();
  m["build"]["command"] = "if [ -e " + hang.string() + " ]; then sleep 300 & echo $! > " + pid_file.string() +
                          "; wait; fi; true";
  std::string a = commit(m, "a", {{"src/k.c", "1"}});
  const auto log = state_ / "watch.log";
  pid_t pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_GT(pid, 0);
  int grandchild = 0;
  for (int i = 0; i < 1200 && grandchild == 0; ++i) {
    std::string text = perfwatch::testing::read_file(pid_file);
    if (!text.empty() && text.back() == '\n') grandchild = std::stoi(text);
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(grandchild, 0) << perfwatch::testing::read_file(log);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  EXPECT_TRUE(runner::start_ticks_of(grandchild).has_value()) << "the build's child should outlive the daemon";

  std::filesystem::remove(hang);
  pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("status=ended"));
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("what=\"build of"));
  // Gone (a zombie reaped by init, at most).
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    std::string stat = perfwatch::testing::read_file("/proc/" + std::to_string(grandchild) + "/stat");
    gone = stat.empty() || stat.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "pid " << grandchild << " survived the restart";
  if (!gone) kill(grandchild, SIGKILL);
  EXPECT_EQ(jobs_of(a)[0].state, store::JobState::kDone);
}

// One daemon per database: a second watch is refused with the first one's
// pid and host, and the first one's live job is not touched.
TEST_F(RestartTest, ASecondWatchOnTheSameDatabaseIsRefusedAndStealsNothing) {
  std::string a = commit(slow_manifest(), "a", {{"src/k.c", "1"}});
  const auto log = state_ / "watch.log";
  const auto second_log = state_ / "second.log";
  pid_t first = spawn_perfwatch(watch_args(a), log);
  ASSERT_GT(first, 0);
  ASSERT_NE(wait_for_run_in_progress(a, 1), 0u) << perfwatch::testing::read_file(log);
  pid_t second = spawn_perfwatch(watch_args(a), second_log);
  EXPECT_NE(wait_exit(second), 0);
  const std::string refused = perfwatch::testing::read_file(second_log);
  EXPECT_THAT(refused, HasSubstr("is watched by pid " + std::to_string(first) + " on host " + runner::host_name()));
  EXPECT_EQ(wait_exit(first), 0) << perfwatch::testing::read_file(log);
  for (const auto& r : runs_of(a)) EXPECT_EQ(r.status, store::RunStatus::kOk);
  ASSERT_EQ(jobs_of(a).size(), 1u);
  EXPECT_EQ(jobs_of(a)[0].state, store::JobState::kDone);
}

TEST_F(RestartTest, AStaleWatchLockIsTakenOverWithALogLine) {
  std::string a = commit(fake_manifest(), "a", {{"src/k.c", "1"}});
  perfwatch::testing::write_file(state_ / "perfwatch.db.watch-lock",
                                 "pid 999999 on host " + runner::host_name() + " since 2026-01-01T00:00:00Z\n");
  const auto log = state_ / "watch.log";
  pid_t pid = spawn_perfwatch(watch_args(a), log);
  ASSERT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("step=lock status=taken_over"));
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("pid 999999"));
}

// `perfwatch bench` killed mid-run leaves its run `running`; the next bench
// finds its process dead and cuts the run off.
TEST_F(RestartTest, ABenchKilledMidRunIsCutOffByTheNextBench) {
  std::string a = commit(slow_manifest(), "a", {{"src/k.c", "1"}});
  const auto log = state_ / "bench.log";
  std::vector<std::string> args = {"--db", (state_ / "perfwatch.db").string(), "--state-dir",
                                   (state_ / "work").string(), "bench", "--repo", repo_.path().string()};
  pid_t pid = spawn_perfwatch(args, log);
  ASSERT_GT(pid, 0);
  store::RunId killed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!killed && std::chrono::steady_clock::now() < deadline) {
    auto runs = runs_of_repo_head(a);
    if (!runs.empty() && runs[0].status == store::RunStatus::kRunning &&
        *store::RunReader(*db_).trial_count(runs[0].id) >= 3) {
      ASSERT_EQ(kill(pid, SIGKILL), 0);
      killed = runs[0].id;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ASSERT_NE(killed, 0) << perfwatch::testing::read_file(log);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  EXPECT_EQ(store::RunReader(*db_).run(killed)->status, store::RunStatus::kRunning);
  pid = spawn_perfwatch(args, log);
  EXPECT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  auto cut = store::RunReader(*db_).run(killed);
  EXPECT_EQ(cut->status, store::RunStatus::kCutOff);
  EXPECT_THAT(cut->message, HasSubstr("ended while the run was in progress"));
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("run " + std::to_string(killed) + " was cut off"));
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

// kill -9 while a webhook POST is in flight (the receiver holds it
// unanswered): the message was stored with the flag before the POST, so
// the restart sends it again, with the same id -- at least once -- and it
// is delivered exactly once; the other message once too.
TEST_F(RestartTest, KillNineWhileAWebhookIsPostedThenTheRestartSendsItAgainWithItsId) {
  HookReceiver hook;
  hook.hold(true);
  std::string a = commit(fake_manifest(), "baseline", {{"src/k.c", "1"}});
  json slow = fake_manifest();
  slow["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.5";
  std::string b = commit(slow, "slower base", {{"src/k.c", "2"}});
  std::vector<std::string> args = watch_args(a);
  args.push_back("--webhook");
  args.push_back(hook.url());
  const auto log = state_ / "watch.log";
  pid_t pid = spawn_perfwatch(args, log);
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (hook.received().empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(hook.received().size(), 1u) << perfwatch::testing::read_file(log);
  const std::string in_flight = hook.received()[0].message_id;
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_EQ(wait_exit(pid), 128 + SIGKILL);
  hook.hold(false);

  pid = spawn_perfwatch(args, log);
  ASSERT_EQ(wait_exit(pid), 0) << perfwatch::testing::read_file(log);
  EXPECT_THAT(perfwatch::testing::read_file(log), HasSubstr("step=recover webhooks_pending=2"));
  auto delivered = hook.delivered();
  ASSERT_EQ(delivered.size(), 2u) << perfwatch::testing::read_file(log);
  std::set<std::string> ids;
  for (const auto& body : delivered) {
    EXPECT_EQ(body["commit"]["sha"], b);
    ids.insert(body["message_id"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), 2u) << "each message delivered once";
  EXPECT_TRUE(ids.contains(in_flight)) << "the POST cut off is sent again with its id";
  auto counts = store::OutboxReader(*db_).counts();
  EXPECT_EQ((*counts)[store::OutboxState::kDelivered], 2);
  EXPECT_EQ((*counts)[store::OutboxState::kPending], 0);
  // The flags were judged once: two regressions, not four.
  EXPECT_EQ(flags(store::FlagKind::kRegression).size(), 2u);
}

}  // namespace
}  // namespace perfwatch::daemon::testing
