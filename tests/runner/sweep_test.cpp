#include "runner/sweep.h"

#include <atomic>
#include <chrono>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace perfwatch::runner {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct RecordingSink : RunSink {
  json header;
  std::vector<json> variants, checks, trials, skipped;
  struct Done {
    std::string variant, point;
    size_t values;
    analysis::StopReason reason;
  };
  std::vector<Done> done;
  int progress = 0;
  void on_header(const json& h) override { header = h; }
  void on_variant(const json& l) override { variants.push_back(l); }
  void on_check(const json& l) override { checks.push_back(l); }
  void on_trial(const json& l) override { trials.push_back(l); }
  void on_skipped(const json& l) override { skipped.push_back(l); }
  void on_point_done(const std::string& v, const PointSpec& p, const std::vector<double>& values, int,
                     analysis::StopReason r) override {
    done.push_back({v, p.id, values.size(), r});
  }
  void on_progress(const SweepProgress&) override { ++progress; }
  // Fails (as a full disk would) once this many trials were received.
  std::size_t fail_after_trials = 0;
  std::optional<std::string> failure() const override {
    if (fail_after_trials > 0 && trials.size() >= fail_after_trials) return "disk full";
    return std::nullopt;
  }
};

class SweepTest : public ::testing::Test {
 protected:
  Manifest manifest(const std::string& fake_mode, double idle_timeout_s = 20) {
    json doc = {{"schema_version", 1},
                {"build", {{"command", "true"}}},
                {"paths", {"src/"}},
                {"bench", {{"command", FAKE_BENCH_PATH}, {"idle_timeout_s", idle_timeout_s}, {"timeout_s", 60},
                           {"env", {{"FAKE_BENCH", fake_mode}, {"FAKE_BENCH_LOG", (dir / "requests").string()}}}}},
                {"variants", {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}}}},
                              {{"name", "wide"}, {"params", {{"block_t", 64}}}}}},
                {"sweep", {{"batch", {1, 8}}}},
                {"trials", {{"min", 3}, {"max", 6}, {"target_rel_ci", 0.5}, {"budget_s", 30}}}};
    auto m = parse_manifest(doc, "test manifest");
    EXPECT_TRUE(m.has_value()) << m.error().to_string();
    return *m;
  }

  SweepResult run(const Manifest& m, const std::atomic<bool>* stop = nullptr) {
    SweepRequest req;
    req.watch.stop = stop;
    req.manifest = &m;
    req.checkout = dir.path();
    req.stderr_log = dir / "stderr.log";
    return run_sweep(req, sink);
  }

  testing::TempDir dir;
  RecordingSink sink;
};

TEST_F(SweepTest, AWellBehavedBenchIsMeasuredToTheMinimumAndInterleaved) {
  Manifest m = manifest("ok");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.trials, 12);  // 2 variants x 2 points x min 3 (the CI target is loose)
  EXPECT_EQ(sink.header["bench"], "fake_bench 1");
  EXPECT_EQ(sink.variants.size(), 2u);
  EXPECT_EQ(sink.checks.size(), 4u);
  EXPECT_EQ(sink.trials.size(), 12u);
  ASSERT_EQ(sink.done.size(), 4u);
  for (const auto& d : sink.done) {
    EXPECT_EQ(d.values, 3u);
    EXPECT_EQ(d.reason, analysis::StopReason::kConverged);
  }
  EXPECT_GT(sink.progress, 0);
  // A B A B: the variants' trials alternate inside each point.
  std::string order = testing::read_file(dir / "requests");
  EXPECT_EQ(order, "base\nwide\nbase\nwide\nbase\nwide\nbase\nwide\nbase\nwide\nbase\nwide\n");
}

TEST_F(SweepTest, HugeManifestTimeoutsDoNotTimeTheRunOutAtOnce) {
  Manifest m = manifest("ok");
  m.bench.timeout_s = 1e300;
  m.bench.idle_timeout_s = 1e300;
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.trials, 12);
}

TEST_F(SweepTest, TightTargetRunsToTheMaximum) {
  Manifest m = manifest("ok");
  m.trials.target_rel_ci = 1e-9;
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.trials, 24);
  for (const auto& d : sink.done) EXPECT_EQ(d.reason, analysis::StopReason::kMaxTrials);
}

TEST_F(SweepTest, AnIncorrectVariantGetsNoTrials) {
  Manifest m = manifest("incorrect=wide");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  for (const auto& t : sink.trials) EXPECT_EQ(t["variant"], "base");
  EXPECT_EQ(sink.skipped.size(), 2u);
  int incorrect = 0;
  for (const auto& c : sink.checks) incorrect += c["status"] == "incorrect";
  EXPECT_EQ(incorrect, 2);
}

TEST_F(SweepTest, AnInfeasibleVariantIsNeverAskedFor) {
  Manifest m = manifest("infeasible=wide");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(sink.variants[1]["status"], "infeasible");
  EXPECT_EQ(testing::read_file(dir / "requests").find("wide"), std::string::npos);
}

TEST_F(SweepTest, ACrashKeepsTheTrialsBeforeIt) {
  Manifest m = manifest("crash_after=5");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kCrashed);
  EXPECT_EQ(r.trials, 5);
  EXPECT_EQ(sink.trials.size(), 5u);
  EXPECT_THAT(r.message, HasSubstr("SIGABRT"));
  EXPECT_EQ(r.process.outcome, Outcome::kSignalled);
}

TEST_F(SweepTest, AHangIsKilledAfterTheIdleTimeout) {
  Manifest m = manifest("hang_after=4", /*idle_timeout_s=*/0.5);
  auto start = std::chrono::steady_clock::now();
  SweepResult r = run(m);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  EXPECT_EQ(r.status, RunStatus::kTimedOut);
  EXPECT_EQ(r.trials, 4);
  EXPECT_THAT(r.message, HasSubstr("idle_timeout_s"));
}

TEST_F(SweepTest, GarbageIsAProtocolErrorThatNamesTheLine) {
  Manifest m = manifest("garbage_after=3");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kProtocolError);
  EXPECT_EQ(r.trials, 3);
  // header, 2 variants, check, trial, check, trial, trial, garbage
  EXPECT_THAT(r.message, HasSubstr("bench stdout line 9: not a JSON object"));
}

TEST_F(SweepTest, WrongTrialNumberingIsAProtocolError) {
  Manifest m = manifest("bad_trial_number");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kProtocolError);
  EXPECT_THAT(r.message, HasSubstr("trial: expected 2, got 3"));
}

TEST_F(SweepTest, AnErrorLineFailsTheRunWithTheBenchsWords) {
  Manifest m = manifest("error_line");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kFailed);
  EXPECT_THAT(r.message, HasSubstr("points[0].batch: made-up failure"));
}

TEST_F(SweepTest, ANonZeroExitAfterTheFooterFails) {
  Manifest m = manifest("exit_nonzero");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kFailed);
  EXPECT_EQ(r.trials, 12);
  EXPECT_THAT(r.message, HasSubstr("exited with code 3"));
}

TEST_F(SweepTest, ABenchThatCannotStartIsReported) {
  Manifest m = manifest("ok");
  m.bench.command = (dir / "no-such-bench").string();
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kFailedToStart);
  EXPECT_EQ(r.trials, 0);
  EXPECT_THAT(r.message, HasSubstr("no-such-bench"));
}

TEST_F(SweepTest, ASinkThatCannotStoreEndsTheRunAtOnce) {
  Manifest m = manifest("ok");
  sink.fail_after_trials = 3;
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kStoreFailed);
  EXPECT_STREQ(to_string(r.status), "store_failed");
  EXPECT_THAT(r.message, HasSubstr("disk full"));
  // Not one more measure request after the trial that could not be stored.
  EXPECT_EQ(r.trials, 3);
  EXPECT_EQ(sink.trials.size(), 3u);
}

TEST_F(SweepTest, AStopEndsTheRunInProgress) {
  Manifest m = manifest("hang_after=2", /*idle_timeout_s=*/50);
  std::atomic<bool> stop{false};
  // The hang starts after 2 trials; the stop comes while the runner waits.
  struct StopAfterTrials : RecordingSink {
    std::atomic<bool>* stop = nullptr;
    void on_trial(const json& l) override {
      RecordingSink::on_trial(l);
      if (trials.size() == 2) *stop = true;
    }
  } stopping;
  stopping.stop = &stop;
  SweepRequest req;
  req.manifest = &m;
  req.checkout = dir.path();
  req.stderr_log = dir / "stderr.log";
  req.watch.stop = &stop;
  SweepResult r = run_sweep(req, stopping);
  EXPECT_EQ(r.status, RunStatus::kStopped);
  EXPECT_EQ(r.trials, 2);
  EXPECT_EQ(r.process.outcome, Outcome::kStopped);
  EXPECT_LT(r.wall_s, 40);
}

}  // namespace
}  // namespace perfwatch::runner
