// The protocol rules run_session enforces around any adapter
// (adapters/session.h), with a scripted adapter in-process; every line is
// checked against schemas/bench/v2/ by the same checker the adapters' tests use.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

#include "adapters/session.h"
#include "tests/adapters/adapter_harness.h"

namespace perfwatch::testing {
namespace {

using adapters::Cell;
using nlohmann::json;
using ::testing::HasSubstr;

struct ScriptedBench : adapters::Bench {
  std::function<perfwatch::Status(const adapters::Plan&)> on_prepare = [](const adapters::Plan&) { return perfwatch::Status{}; };
  std::function<perfwatch::Status(const adapters::Variant&, const adapters::Point&, Cell&)> on_measure;
  std::map<std::string, adapters::VariantReport> reports;
  int measured = 0;

  perfwatch::Status prepare(const adapters::Plan& plan) override { return on_prepare(plan); }
  json header() const override {
    return {{"bench", "scripted"}, {"backend", "cpu"}, {"timer", "external"}, {"device", {{"name", "test"}}},
            {"build", {{"id", "x"}}}};
  }
  adapters::VariantReport variant(const adapters::Variant& v) const override {
    auto it = reports.find(v.name);
    return it == reports.end() ? adapters::VariantReport{} : it->second;
  }
  perfwatch::Status measure(const adapters::Variant& v, const adapters::Point& p, Cell& cell) override {
    ++measured;
    return on_measure(v, p, cell);
  }
};

AdapterRun run_session(ScriptedBench& bench, const std::vector<json>& input, const std::string& raw_prefix = "") {
  std::string text = raw_prefix;
  for (const auto& l : input) text += l.dump() + "\n";
  std::istringstream in(text);
  std::ostringstream out, log;
  AdapterRun run;
  run.exit_code = adapters::run_session(bench, in, out, log);
  std::istringstream lines(out.str());
  std::string line;
  while (std::getline(lines, line)) run.lines.push_back(json::parse(line));
  run.log = log.str();
  return run;
}

json time_metric() { return {{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}}}; }
json two_variants() {
  return {{{"name", "a"}, {"params", json::object()}}, {{"name", "b"}, {"params", {{"k", 1}}}}};
}
json one_point() { return {{{"id", "p1"}, {"axes", {{"n", 1}}}}}; }

perfwatch::Status ok_trials(const adapters::Variant&, const adapters::Point&, Cell& cell) {
  if (cell.first()) cell.check_ok();
  for (int i = 0; i < cell.requested(); ++i)
    if (auto ok = cell.trial({{"time_us", 10.0 + i}}, 100); !ok) return ok;
  return {};
}

TEST(Session, TrialsAreNumberedPerCellAcrossRequests) {
  ScriptedBench bench;
  bench.on_measure = ok_trials;
  std::vector<json> input = {plan(two_variants(), one_point(), time_metric(), "time_us"), measure("a", "p1", 2),
                             measure("b", "p1"), measure("a", "p1")};
  auto run = run_session(bench, input);
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  auto a = run.trials("a", "p1");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[2]["trial"], 3);
  EXPECT_EQ(run.of_kind("check").size(), 2u);
  EXPECT_EQ(run.of_kind("footer")[0]["trials"], 4);
  EXPECT_EQ(run.of_kind("header")[0]["schema_version"], 2);
}

TEST(Session, AnInfeasibleVariantIsSkippedWithoutAskingTheAdapter) {
  ScriptedBench bench;
  bench.on_measure = ok_trials;
  bench.reports["b"] = {false, "needs sm_90a", {}};
  std::vector<json> input = {plan(two_variants(), one_point(), time_metric(), "time_us"), measure("b", "p1"),
                             measure("a", "p1"), measure("b", "p1")};
  auto run = run_session(bench, input);
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(bench.measured, 1);
  EXPECT_EQ(run.of_kind("variant")[1]["reason"], "needs sm_90a");
  EXPECT_EQ(run.of_kind("skipped").size(), 2u);
  EXPECT_EQ(run.of_kind("skipped")[0]["status"], "infeasible");
}

TEST(Session, ACellWhoseCheckFailedIsNotAskedAgain) {
  ScriptedBench bench;
  bench.on_measure = [](const adapters::Variant&, const adapters::Point&, Cell& cell) {
    cell.check_incorrect("rel_l2 0.3 > 0.01");
    return perfwatch::Status{};
  };
  std::vector<json> input = {plan(two_variants(), one_point(), time_metric(), "time_us"), measure("a", "p1"),
                             measure("a", "p1")};
  auto run = run_session(bench, input);
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(bench.measured, 1);
  ASSERT_EQ(run.of_kind("skipped").size(), 1u);
  EXPECT_EQ(run.of_kind("skipped")[0]["status"], "incorrect");
  EXPECT_EQ(run.of_kind("skipped")[0]["reason"], "rel_l2 0.3 > 0.01");
}

TEST(Session, BadPlansAndRequestsEndTheRunWithAnErrorLine) {
  ScriptedBench bench;
  bench.on_measure = ok_trials;
  json v1 = plan(two_variants(), one_point(), time_metric(), "time_us");
  v1["schema_version"] = 1;
  auto run = run_session(bench, {v1});
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_EQ(run.lines.size(), 1u);
  EXPECT_EQ(run.lines[0]["where"], "plan");
  EXPECT_THAT(run.lines[0]["message"].get<std::string>(), HasSubstr("speak version 2"));

  run = run_session(bench, {plan(two_variants(), one_point(), time_metric(), "tokens_per_s")});
  EXPECT_EQ(run.lines.at(0)["where"], "plan: judged_metric");

  json bad_axis = plan(two_variants(), {{{"id", "p1"}, {"axes", {{"n", json::array()}}}}}, time_metric(), "time_us");
  run = run_session(bench, {bad_axis});
  EXPECT_THAT(run.lines.at(0)["where"].get<std::string>(), HasSubstr("plan: points[0].axes.n"));

  run = run_session(bench, {}, "\n\n");
  EXPECT_THAT(run.lines.at(0)["message"].get<std::string>(), HasSubstr("stdin closed before the plan"));

  std::vector<json> input = {plan(two_variants(), one_point(), time_metric(), "time_us"), measure("a", "p1"),
                             measure("c", "p1")};
  run = run_session(bench, input);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.lines.back()["where"], "measure request 2: variant");
}

TEST(Session, AnAdapterCannotBreakTheProtocol) {
  ScriptedBench bench;
  std::vector<json> input = {plan(two_variants(), one_point(), time_metric(), "time_us"), measure("a", "p1", 2)};
  // Too few trials.
  bench.on_measure = [](const adapters::Variant&, const adapters::Point&, Cell& cell) {
    cell.check_ok();
    return cell.trial({{"time_us", 1.0}});
  };
  auto run = run_session(bench, input);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_THAT(run.lines.back()["message"].get<std::string>(), HasSubstr("answered 1 of 2 trials"));
  // A value that is not > 0, or undeclared, never becomes a trial line.
  bench.on_measure = [](const adapters::Variant&, const adapters::Point&, Cell& cell) {
    cell.check_ok();
    return cell.trial({{"time_us", 0.0}});
  };
  run = run_session(bench, input);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.of_kind("trial").empty());
  EXPECT_THAT(run.lines.back()["message"].get<std::string>(), HasSubstr("time_us = 0: a measured value must be"));
  bench.on_measure = [](const adapters::Variant&, const adapters::Point&, Cell& cell) {
    cell.check_ok();
    return cell.trial({{"time_us", 1.0}, {"tokens", 5.0}});
  };
  run = run_session(bench, input);
  EXPECT_THAT(run.lines.back()["message"].get<std::string>(), HasSubstr("tokens is not a declared metric"));
  // A failure before the check is the adapter's bug, not a skipped line.
  bench.on_measure = [](const adapters::Variant&, const adapters::Point&, Cell& cell) { return cell.fail("x"); };
  run = run_session(bench, input);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.of_kind("skipped").empty());
}

TEST(Session, APrepareErrorIsTheFirstLine) {
  ScriptedBench bench;
  bench.on_prepare = [](const adapters::Plan&) {
    return perfwatch::Status(perfwatch::fail(invalid_argument("bench.command", "'x': no such program")));
  };
  auto run = run_session(bench, {plan(two_variants(), one_point(), time_metric(), "time_us")});
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_EQ(run.lines.size(), 1u);
  EXPECT_EQ(run.lines[0], json({{"kind", "error"}, {"message", "'x': no such program"}, {"where", "bench.command"}}));
  EXPECT_THAT(run.log, HasSubstr("bench.command: 'x': no such program"));
}

}  // namespace
}  // namespace perfwatch::testing
