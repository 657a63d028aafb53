#include "runner/process.h"

#include <signal.h>

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

}  // namespace
}  // namespace perfwatch::runner
