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
  std::vector<json> variants;
  std::vector<CheckLine> checks;
  std::vector<TrialLine> trials;
  std::vector<SkippedLine> skipped;
  struct Done {
    std::string variant, point;
    size_t values;
    analysis::StopReason reason;
  };
  std::vector<Done> done;
  int progress = 0;
  void on_header(const json& h) override { header = h; }
  void on_variant(const json& l) override { variants.push_back(l); }
  void on_check(const CheckLine& l) override { checks.push_back(l); }
  void on_trial(const TrialLine& l) override { trials.push_back(l); }
  void on_skipped(const SkippedLine& l) override { skipped.push_back(l); }
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
  // Version 1's lines, normalised: the point by its key, the four metrics by name.
  EXPECT_EQ(sink.trials[0].point, "batch=1,dtype=bf16,heads=16,topk=2048");
  EXPECT_EQ(sink.trials[0].metrics.size(), 4u);
  EXPECT_GT(sink.trials[0].metrics.at("tokens_per_s"), 0);
  EXPECT_EQ(sink.trials[0].steps, 100);
  EXPECT_FALSE(sink.trials[0].clock_mhz.has_value());
  EXPECT_EQ(sink.checks[0].errors, json({{"rel_l2_o", 0.002}}));
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
  for (const auto& t : sink.trials) EXPECT_EQ(t.variant, "base");
  EXPECT_EQ(sink.skipped.size(), 2u);
  int incorrect = 0;
  for (const auto& c : sink.checks) incorrect += c.status == "incorrect";
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
    void on_trial(const TrialLine& l) override {
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

// A version 2 manifest: the runner writes a v2 plan and reads v2 lines.
class SweepV2Test : public SweepTest {
 protected:
  Manifest manifest_v2(const std::string& fake_mode) {
    json doc = {{"schema_version", 2},
                {"paths", {"src/"}},
                {"bench", {{"command", FAKE_BENCH_PATH}, {"idle_timeout_s", 20}, {"timeout_s", 60},
                           {"params", {{"tolerance", {{"rel_l2", 0.01}}}}},
                           {"env", {{"FAKE_BENCH", fake_mode}, {"FAKE_BENCH_LOG", (dir / "requests").string()}}}}},
                {"variants", {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}}}},
                              {{"name", "wide"}, {"params", {{"block_t", 64}}}}}},
                {"sweep", {{"axes", {{"batch", {1, 8}}, {"mode", {"fast"}}}}, {"label", "C{batch}"}}},
                {"metrics", {{{"name", "tokens_per_s"}, {"unit", "tokens/s"}, {"direction", "higher_is_better"}},
                             {{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}}}},
                {"trials", {{"min", 3}, {"max", 6}, {"target_rel_ci", 0.5}, {"budget_s", 30}}}};
    auto m = parse_manifest(doc, "test manifest");
    EXPECT_TRUE(m.has_value()) << m.error().to_string();
    return *m;
  }
};

TEST_F(SweepV2Test, AVersionTwoBenchIsMeasuredWithItsDeclaredMetrics) {
  Manifest m = manifest_v2("ok");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.trials, 12);
  EXPECT_EQ(sink.header["schema_version"], 2);
  ASSERT_EQ(sink.trials.size(), 12u);
  const TrialLine& t = sink.trials[0];
  EXPECT_EQ(t.point, "batch=1,mode=fast");
  EXPECT_EQ(t.metrics.size(), 2u);
  EXPECT_GT(t.metrics.at("tokens_per_s"), 0);
  EXPECT_GT(t.metrics.at("time_us"), 0);
  EXPECT_EQ(sink.checks[0].errors, json({{"rel_l2", 0.002}}));
  EXPECT_EQ(sink.checks[0].point, "batch=1,mode=fast");
  ASSERT_EQ(sink.done.size(), 4u);
  EXPECT_EQ(sink.done[0].point, "C1");  // the protocol's id of the point: its label
}

TEST_F(SweepV2Test, AnUndeclaredMetricIsAProtocolError) {
  Manifest m = manifest_v2("undeclared_metric");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kProtocolError);
  EXPECT_THAT(r.message, HasSubstr("metrics.watts: is not a metric the manifest declares"));
  EXPECT_EQ(r.trials, 0);
}

TEST_F(SweepV2Test, TheJudgedMetricMustBeInEveryTrial) {
  Manifest m = manifest_v2("no_judged_metric");
  SweepResult r = run(m);
  EXPECT_EQ(r.status, RunStatus::kProtocolError);
  EXPECT_THAT(r.message, HasSubstr("metrics.tokens_per_s: missing (the manifest's judged metric)"));
}

TEST_F(SweepV2Test, AnAdapterIsPerfwatchItselfGivenTheBenchObject) {
  // The runner starts `<self> adapter --kind command` with the manifest's bench
  // object in PERFWATCH_ADAPTER_BENCH; the fake bench stands in for perfwatch
  // and answers with an error line unless both are as the contract says.
  json doc = json(manifest_v2("expect_adapter=command").source);
  doc["bench"]["adapter"] = "command";
  doc["bench"]["extract"] = {{"tokens_per_s", {{"regex", "([0-9.]+) tok/s"}}}};
  auto m = parse_manifest(doc, "test manifest");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  SweepRequest req;
  req.manifest = &*m;
  req.checkout = dir.path();
  req.stderr_log = dir / "stderr.log";
  req.self_executable = FAKE_BENCH_PATH;
  SweepResult r = run_sweep(req, sink);
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.trials, 12);
}

TEST(ProtocolV2, ThePlanOfAVersionTwoManifestIsValidAndCarriesTheDeclarations) {
  json doc = {{"schema_version", 2},
              {"paths", {"src/"}},
              {"bench", {{"command", "b"}, {"backend", "cuda"}, {"params", {{"tolerance", {{"rel_l2", 0.01}}}}}}},
              {"variants", {{{"name", "base"}, {"params", {{"block_t", 32}}}}}},
              {"sweep", {{"axes", {{"batch", {1, 48}}, {"dtype", {"bf16"}}}}, {"label", "C{batch}"}}},
              {"metrics", {{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}, {"description", "d"}}}}};
  auto m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  auto protocol = Protocol::load(2);
  ASSERT_TRUE(protocol.has_value()) << protocol.error().to_string();
  auto plan = protocol->make_plan(*m, m->points, 5);  // validated against bench/v2/plan.schema.json
  ASSERT_TRUE(plan.has_value()) << plan.error().to_string();
  EXPECT_EQ((*plan)["schema_version"], 2);
  EXPECT_EQ((*plan)["points"][1], json({{"id", "C48"}, {"axes", {{"batch", 48}, {"dtype", "bf16"}}}}));
  EXPECT_EQ((*plan)["judged_metric"], "time_us");
  EXPECT_EQ((*plan)["metrics"][0], json({{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}, {"description", "d"}}));
  EXPECT_EQ((*plan)["params"], json({{"tolerance", {{"rel_l2", 0.01}}}}));
  EXPECT_FALSE((*plan).contains("check"));
  EXPECT_EQ((*plan)["backend"], "cuda");
}

TEST(ProtocolV2, LinesAreValidatedAndNormalised) {
  auto protocol = Protocol::load(2);
  ASSERT_TRUE(protocol.has_value());
  auto trial = protocol->parse(R"({"kind":"trial","variant":"v","point":"C8","trial":2,"metrics":{"tokens_per_s":900.5},"clock_mhz":1755,"throttled":true})", 4);
  ASSERT_TRUE(trial.has_value()) << trial.error().to_string();
  TrialLine t = protocol->trial(trial->doc, "batch=8");
  EXPECT_EQ(t.trial_no, 2);
  EXPECT_EQ(t.point, "batch=8");
  EXPECT_EQ(t.metrics, (std::map<std::string, double>{{"tokens_per_s", 900.5}}));
  EXPECT_EQ(t.clock_mhz, 1755);
  EXPECT_FALSE(t.steps.has_value());
  EXPECT_TRUE(t.throttled);

  auto bad = protocol->parse(R"({"kind":"trial","variant":"v","point":"C8","trial":1,"metrics":{"time_us":-1}})", 9);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kProtocol);
  EXPECT_THAT(bad.error().to_string(), HasSubstr("bench stdout line 9"));
  EXPECT_THAT(bad.error().to_string(), HasSubstr("time_us"));

  auto check = protocol->parse(R"({"kind":"check","variant":"v","point":"C8","status":"incorrect","reason":"r","errors":{"rel_l2":0.5},"tolerance":{"rel_l2":0.01},"detail":{"sets":4}})", 3);
  ASSERT_TRUE(check.has_value()) << check.error().to_string();
  CheckLine c = protocol->check(check->doc, "batch=8");
  EXPECT_EQ(c.status, "incorrect");
  EXPECT_EQ(c.errors, json({{"rel_l2", 0.5}}));
  EXPECT_EQ(c.tolerance, json({{"rel_l2", 0.01}}));
  EXPECT_EQ(c.detail, json({{"sets", 4}}));

  // Version 1's trial fields are not version 2's.
  EXPECT_FALSE(protocol->parse(R"({"kind":"trial","variant":"v","point":"C8","trial":1,"time_us":5,"steps":1,"tokens_per_s":1,"bytes_per_s":1,"flops_per_s":1,"throttled":false})", 1).has_value());
  EXPECT_FALSE(Protocol::load(3).has_value());
}

TEST(ProtocolV1, TrialsNormaliseIntoTheSameType) {
  auto protocol = Protocol::load(1);
  ASSERT_TRUE(protocol.has_value());
  auto line = protocol->parse(R"({"kind":"trial","variant":"v","point":"b8_h16_k2048_bf16","trial":1,"time_us":5,"steps":3,"tokens_per_s":1600000,"bytes_per_s":2,"flops_per_s":3,"sm_clock_mhz":1980,"throttled":false})", 1);
  ASSERT_TRUE(line.has_value()) << line.error().to_string();
  TrialLine t = protocol->trial(line->doc, "batch=8,dtype=bf16,heads=16,topk=2048");
  EXPECT_EQ(t.metrics, (std::map<std::string, double>{{"time_us", 5}, {"tokens_per_s", 1600000}, {"bytes_per_s", 2}, {"flops_per_s", 3}}));
  EXPECT_EQ(t.steps, 3);
  EXPECT_EQ(t.clock_mhz, 1980);
}

}  // namespace
}  // namespace perfwatch::runner
