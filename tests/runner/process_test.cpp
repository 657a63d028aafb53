#include "runner/process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace perfwatch::runner {
namespace {

using Clock = std::chrono::steady_clock;

ProcessSpec sh(const std::string& command, double timeout_s = 0) {
  ProcessSpec spec;
  spec.command = command;
  spec.timeout_s = timeout_s;
  return spec;
}

TEST(Process, ExitCodeAndLogAreKept) {
  testing::TempDir dir;
  auto r = run_logged(sh("echo building; echo oops >&2; exit 3"), dir / "log");
  EXPECT_EQ(r.outcome, Outcome::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "exited with code 3");
  EXPECT_NE(r.tail.find("building"), std::string::npos);
  EXPECT_NE(r.tail.find("oops"), std::string::npos);
  EXPECT_EQ(testing::read_file(dir / "log"), r.tail);
}

TEST(Process, TailIsTheEndOfALongLog) {
  testing::TempDir dir;
  auto r = run_logged(sh("seq 1 100000"), dir / "log", 64);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.tail.size(), 64u);
  EXPECT_NE(r.tail.find("100000\n"), std::string::npos);
}

TEST(Process, ASignalIsReportedAsSuch) {
  testing::TempDir dir;
  auto r = run_logged(sh("kill -SEGV $$"), dir / "log");
  EXPECT_EQ(r.outcome, Outcome::kSignalled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.describe(), "killed by signal 11 (SIGSEGV)");
}

// Dead, or a zombie waiting for init to reap it: either way it runs no more.
bool gone(int pid) {
  std::string stat = testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return true;
  auto close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z';
}

TEST(Process, TimeoutKillsTheWholeProcessGroup) {
  testing::TempDir dir;
  // The grandchild would outlive a kill of the shell alone.
  std::string pid_file = (dir / "grandchild.pid").string();
  auto start = Clock::now();
  auto r = run_logged(sh("sh -c 'echo $$ > " + pid_file + "; exec sleep 30' & sleep 30", 0.5), dir / "log");
  double took = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  EXPECT_LT(took, 10.0);
  EXPECT_NE(r.describe().find("timed out"), std::string::npos);
  int grandchild = std::stoi(testing::read_file(pid_file));
  for (int i = 0; i < 200 && !gone(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(gone(grandchild)) << "pid " << grandchild << " survived the timeout";
}

// A manifest may say 1e300 s: Clock::now() + that overflows to a time in
// the past, and the child was timed out at once.
TEST(Process, AHugeTimeoutIsNoTimeoutNotAnOverflow) {
  const auto max = std::chrono::steady_clock::time_point::max();
  EXPECT_EQ(deadline_after(1e300), max);
  EXPECT_EQ(deadline_after(std::numeric_limits<double>::infinity()), max);
  EXPECT_EQ(deadline_after(9.3e9), max);  // past the clock's ~292 years
  EXPECT_EQ(deadline_after(0), max);
  EXPECT_EQ(deadline_after(std::nan("")), max);
  EXPECT_LT(deadline_after(60), max);
  EXPECT_GT(deadline_after(60), std::chrono::steady_clock::now());
  Captured c = run_captured(sh("echo done", 1e300));
  EXPECT_EQ(c.result.outcome, Outcome::kExited) << c.result.describe();
  EXPECT_EQ(c.out, "done\n");
}

TEST(Process, ASimpleCommandRunsWithoutAShellSoSignalsShow) {
  testing::TempDir dir;
  auto r = run_logged(sh("sleep 30", 0.2), dir / "log");
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
  auto c = run_captured(sh("echo plain words"));
  EXPECT_EQ(c.out, "plain words\n");
}

TEST(Process, FailedToStartIsAValue) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/program"};
  auto c = run_captured(spec);
  EXPECT_EQ(c.result.outcome, Outcome::kFailedToStart);
  EXPECT_FALSE(c.result.start_error.empty());
}

TEST(Process, CapturedKeepsStdoutAndStderrApart) {
  auto c = run_captured(sh("echo out; echo err >&2"));
  EXPECT_TRUE(c.result.ok());
  EXPECT_EQ(c.out, "out\n");
  EXPECT_EQ(c.result.tail, "err\n");
}

TEST(Process, EnvironmentAndWorkdirAreSet) {
  testing::TempDir dir;
  ProcessSpec spec = sh("echo \"$PW_TEST_VALUE\"; pwd");
  spec.env["PW_TEST_VALUE"] = "hello";
  spec.workdir = dir.path();
  auto c = run_captured(spec);
  EXPECT_EQ(c.out, "hello\n" + std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST(LineChild, EchoesLinesAndSeesEndOfFile) {
  testing::TempDir dir;
  auto child = LineChild::start(sh("cat"), dir / "stderr");
  ASSERT_TRUE(child.has_value());
  ASSERT_TRUE((*child)->write_line("{\"a\": 1}").has_value());
  std::string line;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kLine);
  EXPECT_EQ(line, "{\"a\": 1}");
  (*child)->close_stdin();
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kEof);
  auto r = (*child)->wait(deadline);
  EXPECT_TRUE(r.ok()) << r.describe();
}

// A child holds no descriptor but its own stdio. Benches start from several
// threads at once (one a GPU): a child that inherited another bench's stdin
// pipe, open in this process while that bench was being started, kept that
// stdin open after perfwatch closed it, so the other bench never saw its end
// of input and never wrote its footer (both waited the idle timeout). Here an
// inheritable pipe stands for the other bench's: no child may hold it.
class Inheritable : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::pipe(fds_), 0);  // no O_CLOEXEC, as another thread's pipe is before it is closed
  }
  void TearDown() override {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  // A shell command that prints which of the two descriptors it holds.
  std::string probe() const {
    return "for fd in " + std::to_string(fds_[0]) + " " + std::to_string(fds_[1]) +
           "; do [ -e /proc/self/fd/$fd ] && echo \"holds $fd\"; done; echo checked";
  }
  int fds_[2] = {-1, -1};
};

TEST_F(Inheritable, ALineChildHoldsNoDescriptorButItsOwnStdio) {
  testing::TempDir dir;
  auto child = LineChild::start(sh(probe()), dir / "stderr");
  ASSERT_TRUE(child.has_value());
  std::string line, said;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while ((*child)->read_line(&line, deadline) == LineChild::Read::kLine) said += line + "\n";
  EXPECT_EQ(said, "checked\n");
}

TEST_F(Inheritable, ACapturedChildHoldsNoDescriptorButItsOwnStdio) {
  auto c = run_captured(sh(probe()));
  EXPECT_TRUE(c.result.ok()) << c.result.describe();
  EXPECT_EQ(c.out, "checked\n");
}

TEST_F(Inheritable, ALoggedChildHoldsNoDescriptorButItsOwnStdio) {
  testing::TempDir dir;
  auto r = run_logged(sh(probe()), dir / "log");
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.tail, "checked\n");
}

TEST(LineChild, ReadTimesOutWhenTheChildIsSilent) {
  testing::TempDir dir;
  auto child = LineChild::start(sh("sleep 30"), dir / "stderr");
  ASSERT_TRUE(child.has_value());
  std::string line;
  auto start = Clock::now();
  EXPECT_EQ((*child)->read_line(&line, start + std::chrono::milliseconds(200)), LineChild::Read::kTimeout);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(200));
  auto r = (*child)->wait(Clock::now());
  EXPECT_EQ(r.outcome, Outcome::kTimedOut);
}

TEST(LineChild, WritingToADeadChildFailsInsteadOfKillingUs) {
  testing::TempDir dir;
  auto child = LineChild::start(sh("exit 0"), dir / "stderr");
  ASSERT_TRUE(child.has_value());
  auto r = (*child)->wait(Clock::now() + std::chrono::seconds(10));
  EXPECT_TRUE(r.ok());
  Status last;
  for (int i = 0; i < 100 && last.has_value(); ++i) last = (*child)->write_line(std::string(4096, 'x'));
  EXPECT_FALSE(last.has_value());
}

TEST(LineChild, ALastLineWithoutNewlineStillCounts) {
  testing::TempDir dir;
  auto child = LineChild::start(sh("printf 'first\\nsecond'"), dir / "stderr");
  ASSERT_TRUE(child.has_value());
  std::string line;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kLine);
  EXPECT_EQ(line, "first");
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kLine);
  EXPECT_EQ(line, "second");
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kEof);
}

TEST(LineChild, DestructorKillsARunningChild) {
  testing::TempDir dir;
  int pid = 0;
  {
    auto child = LineChild::start(sh("exec sleep 30"), dir / "stderr");
    ASSERT_TRUE(child.has_value());
    pid = (*child)->pid();
    ASSERT_EQ(::kill(pid, 0), 0);
  }
  EXPECT_NE(::kill(pid, 0), 0) << "the child outlived its LineChild";
}

// Waits (bounded) until `pid` runs no more; true when it is gone.
bool ends_within_10s(int pid) {
  for (int i = 0; i < 1000 && !gone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return gone(pid);
}

TEST(LineChild, ABenchThatExitsWhileAGrandchildHoldsItsStdoutIsSeenAsExited) {
  testing::TempDir dir;
  // The grandchild keeps the bench's stdout open for 60 s after the bench exits.
  auto child = LineChild::start(sh("sleep 60 & echo last"), dir / "stderr");
  ASSERT_TRUE(child.has_value());
  std::string line;
  auto deadline = Clock::now() + std::chrono::seconds(50);
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kLine);
  EXPECT_EQ(line, "last");
  // Not kTimeout at the idle deadline: the bench has exited and its pipe is drained.
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kEof);
  auto r = (*child)->wait(deadline);
  EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(Process, CapturedOutputEndsWhenTheChildExitsThoughAGrandchildHoldsThePipe) {
  auto c = run_captured(sh("sleep 60 & echo done", 50));
  EXPECT_EQ(c.result.outcome, Outcome::kExited) << c.result.describe();
  EXPECT_EQ(c.out, "done\n");
  EXPECT_LT(c.result.wall_s, 40) << "waited for the grandchild";
}

TEST(Process, AHugeLogKeepsItsHeadAndTailAndSaysWhatWasDropped) {
  testing::TempDir dir;
  // 3 MiB of numbered lines; the log keeps the first and the last MiB.
  auto r = run_logged(sh("echo FIRST-LINE; head -c 3145728 /dev/zero | tr '\\0' x; echo; echo LAST-LINE"), dir / "log");
  EXPECT_TRUE(r.ok()) << r.describe();
  std::string log = testing::read_file(dir / "log");
  EXPECT_LE(log.size(), (2u << 20) + 200);
  EXPECT_EQ(log.rfind("FIRST-LINE\n", 0), 0u);
  EXPECT_NE(log.find("bytes dropped"), std::string::npos);
  EXPECT_NE(r.tail.find("LAST-LINE"), std::string::npos);
}

TEST(LineChild, TheBenchsStderrLogIsCappedToo) {
  testing::TempDir dir;
  auto child = LineChild::start(sh("head -c 3145728 /dev/zero >&2; echo END >&2; echo out"), dir / "stderr");
  ASSERT_TRUE(child.has_value());
  std::string line;
  auto deadline = Clock::now() + std::chrono::seconds(50);
  EXPECT_EQ((*child)->read_line(&line, deadline), LineChild::Read::kLine);
  auto r = (*child)->wait(deadline);
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_LE(std::filesystem::file_size(dir / "stderr"), (2u << 20) + 200);
  EXPECT_NE(r.tail.find("END"), std::string::npos);
}

// A child dies with the process that started it (PR_SET_PDEATHSIG): a helper
// process starts a child and is then killed with SIGKILL.
TEST(Process, AChildDiesWithTheProcessThatStartedIt) {
  testing::TempDir dir;
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::close(report[0]);
    auto child = LineChild::start(sh("exec sleep 60"), dir / "stderr");
    int pid = child ? (*child)->pid() : -1;
    (void)!::write(report[1], &pid, sizeof pid);
    ::pause();
    ::_exit(0);
  }
  ::close(report[1]);
  int child_pid = -1;
  ASSERT_EQ(::read(report[0], &child_pid, sizeof child_pid), static_cast<ssize_t>(sizeof child_pid));
  ::close(report[0]);
  ASSERT_GT(child_pid, 0);
  ASSERT_EQ(::kill(helper, SIGKILL), 0);
  ::waitpid(helper, nullptr, 0);
  EXPECT_TRUE(ends_within_10s(child_pid)) << "pid " << child_pid << " outlived the process that started it";
  ::kill(child_pid, SIGKILL);
}

TEST(Process, AStopEndsTheWholeGroupAndSaysSo) {
  testing::TempDir dir;
  std::atomic<bool> stop{false};
  std::string pid_file = (dir / "grandchild.pid").string();
  ProcessSpec spec = sh("sh -c 'echo $$ > " + pid_file + "; exec sleep 60' & sleep 60", 50);
  ProcessIdentity started_leader, ended_leader;
  spec.watch.stop = &stop;
  // The stop is asked for once the child runs, as a signal handler would.
  spec.watch.started = [&](const ProcessIdentity& leader) {
    started_leader = leader;
    stop = true;
  };
  spec.watch.ended = [&](const ProcessIdentity& leader) { ended_leader = leader; };
  auto r = run_logged(spec, dir / "log");
  EXPECT_EQ(r.outcome, Outcome::kStopped);
  EXPECT_NE(r.describe().find("stopped"), std::string::npos);
  EXPECT_GT(started_leader.pid, 0);
  EXPECT_GT(started_leader.start_ticks, 0u);
  EXPECT_EQ(ended_leader.pid, started_leader.pid);
  EXPECT_LT(r.wall_s, 40);
  std::string grandchild = testing::read_file(pid_file);
  if (!grandchild.empty()) {
    EXPECT_TRUE(ends_within_10s(std::stoi(grandchild)));
  }
}

TEST(LineChild, AStopEndsTheReadAndTheGroup) {
  testing::TempDir dir;
  std::atomic<bool> stop{false};
  ProcessSpec spec = sh("exec sleep 60");
  spec.watch.stop = &stop;
  bool ended = false;
  spec.watch.ended = [&](const ProcessIdentity&) { ended = true; };
  auto child = LineChild::start(spec, dir / "stderr");
  ASSERT_TRUE(child.has_value());
  int pid = (*child)->pid();
  stop = true;
  std::string line;
  EXPECT_EQ((*child)->read_line(&line, Clock::now() + std::chrono::seconds(50)), LineChild::Read::kStopped);
  auto r = (*child)->wait(Clock::now() + std::chrono::seconds(50));
  EXPECT_EQ(r.outcome, Outcome::kStopped);
  EXPECT_TRUE(ended);
  EXPECT_TRUE(gone(pid));
}

// A group left by a killed perfwatch: its leader recorded, then ended later by
// another process that checks it is still the group that was started.
TEST(ProcessGroups, ALeftoverGroupIsEndedAndARecycledPidIsLeftAlone) {
  testing::TempDir dir;
  ProcessIdentity leader;
  {
    // A running group, as a killed perfwatch would leave it.
    ProcessSpec spec = sh("exec sleep 60");
    spec.watch.started = [&](const ProcessIdentity& l) { leader = l; };
    auto child = LineChild::start(spec, dir / "stderr");
    ASSERT_TRUE(child.has_value());
    // Pretend the recorded start time differs: a recycled pid is not ours.
    ProcessIdentity other = leader;
    other.start_ticks += 1;
    EXPECT_EQ(end_leftover_group(other, 1), Leftover::kNotOurs);
    EXPECT_TRUE(alive(leader));
    EXPECT_FALSE(alive(other));
    EXPECT_EQ(end_leftover_group(leader, 1), Leftover::kEnded);
    EXPECT_TRUE(ends_within_10s(leader.pid));
  }
  EXPECT_EQ(end_leftover_group(leader, 1), Leftover::kGone);
  EXPECT_TRUE(alive(self()));
  EXPECT_FALSE(boot_id().empty());
}

}  // namespace
}  // namespace perfwatch::runner
