// The command adapter through `perfwatch adapter --kind command`, with real
// scripts: a throughput line read by a regex, a JSON result read by pointers,
// and each failure a user meets (a missing program, a pattern that matches
// nothing, a non-number, a command that fails at one point, a timeout).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/host.h"
#include "tests/adapters/adapter_harness.h"
#include "tests/support/git_fixture.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json tokens_metric() { return {{"name", "tokens_per_s"}, {"unit", "tokens/s"}, {"direction", "higher_is_better"}}; }

json ctas_variants() {
  return {{{"name", "ctas64"}, {"params", {{"target_ctas", 64}, {"num_warps", 4}}}},
          {{"name", "ctas128"}, {"params", {{"target_ctas", 128}, {"num_warps", 4}}}}};
}

json conc_points() {
  return {{{"id", "C1"}, {"axes", {{"batch", 1}}}}, {{"id", "C8"}, {"axes", {{"batch", 8}}}}};
}

json throughput_bench(const json& env = json::object()) {
  json e = {{"TARGET_CTAS", "{target_ctas}"}};
  for (const auto& [k, v] : env.items()) e[k] = v;
  return {{"adapter", "command"},
          {"command", "./throughput.sh --conc {batch} --label {variant}"},
          {"env", e},
          {"extract", {{"tokens_per_s", {{"regex", "throughput: ([0-9.]+) tokens/s"}}}}}};
}

std::vector<json> standard_input() {
  return {plan(ctas_variants(), conc_points(), json::array({tokens_metric()}), "tokens_per_s"),
          measure("ctas64", "C1"),  measure("ctas128", "C1"), measure("ctas64", "C1", 2),
          measure("ctas64", "C8"),  measure("ctas128", "C8")};
}

TEST(CommandAdapter, ReadsTheThroughputLineWithAxesAndParamsSubstituted) {
  auto input = standard_input();
  auto run = run_adapter("command", throughput_bench(), input, tests_dir() / "scripts");
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();

  // throughput.sh prints 1000 * conc * TARGET_CTAS / 64: every value tells
  // which axis value and which param arrived.
  auto value = [&](const std::string& v, const std::string& p, size_t i) {
    auto t = run.trials(v, p);
    return i < t.size() ? t[i]["metrics"]["tokens_per_s"].get<double>() : -1.0;
  };
  EXPECT_EQ(value("ctas64", "C1", 0), 1000);
  EXPECT_EQ(value("ctas64", "C1", 2), 1000);
  EXPECT_EQ(value("ctas128", "C1", 0), 2000);
  EXPECT_EQ(value("ctas64", "C8", 0), 8000);
  EXPECT_EQ(value("ctas128", "C8", 0), 16000);
  EXPECT_EQ(run.trials("ctas64", "C1").size(), 3u);

  json check = run.check("ctas128", "C8");
  EXPECT_EQ(check["status"], "ok");
  EXPECT_EQ(check["detail"]["command"], "./throughput.sh --conc 8 --label ctas128");
  EXPECT_EQ(check["detail"]["env"]["TARGET_CTAS"], "128");

  json header = run.of_kind("header").at(0);
  EXPECT_EQ(header["timer"], "external");
  EXPECT_EQ(header["backend"], "auto");
  EXPECT_EQ(header["device"]["name"], adapters::host_facts().host_name);
  EXPECT_EQ(header["build"]["binary_hash"], *adapters::sha256_file(tests_dir() / "scripts" / "throughput.sh"));
  // num_warps is in neither the command nor the environment.
  EXPECT_EQ(run.of_kind("variant").at(0)["ignored_params"], json({"num_warps"}));
  // One log line per execution: the check and each trial.
  EXPECT_THAT(run.log, HasSubstr("ctas64 @ C1 check: `./throughput.sh --conc 1 --label ctas64` exited with code 0"));
}

TEST(CommandAdapter, ReadsJsonPointersFromTheLastJsonLineAndScales) {
  json bench = {{"adapter", "command"},
                {"command", "./json_metrics.sh {batch}"},
                {"extract",
                 {{"tokens_per_s", {{"json_pointer", "/result/tokens_per_s"}}},
                  {"latency_us", {{"json_pointer", "/result/latency_ms"}, {"scale", 1000}}}}}};
  std::vector<json> input = {
      plan({{{"name", "base"}, {"params", json::object()}}}, conc_points(),
           {tokens_metric(), {{"name", "latency_us"}, {"unit", "us"}, {"direction", "lower_is_better"}}},
           "tokens_per_s"),
      measure("base", "C1", 2), measure("base", "C8")};
  auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  ASSERT_EQ(run.trials("base", "C8").size(), 1u);
  EXPECT_EQ(run.trials("base", "C8")[0]["metrics"]["tokens_per_s"], 4000);
  EXPECT_DOUBLE_EQ(run.trials("base", "C8")[0]["metrics"]["latency_us"].get<double>(), 4000);
  EXPECT_DOUBLE_EQ(run.trials("base", "C1")[1]["metrics"]["latency_us"].get<double>(), 2250);
}

TEST(CommandAdapter, AProgramThatDoesNotExistIsAnErrorBeforeTheHeader) {
  json bench = throughput_bench();
  bench["command"] = "./no_such_script.sh --conc {batch}";
  auto input = standard_input();
  auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  ASSERT_EQ(run.lines.size(), 1u) << run.dump();
  EXPECT_EQ(run.lines[0]["where"], "bench.command");
  EXPECT_THAT(run.lines[0]["message"].get<std::string>(), HasSubstr("'./no_such_script.sh': no such program"));

  bench["command"] = "no-such-tool-perfwatch --conc {batch}";
  run = run_adapter("command", bench, input, tests_dir() / "scripts");
  ASSERT_EQ(run.lines.size(), 1u) << run.dump();
  EXPECT_THAT(run.lines[0]["message"].get<std::string>(), HasSubstr("not found on PATH"));
}

TEST(CommandAdapter, AMissingProgramBehindShellSyntaxIsExit127AndAnError) {
  json bench = throughput_bench();
  bench["command"] = "cd . && no-such-tool-perfwatch --conc {batch}";
  auto input = standard_input();
  auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 1) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  json error = run.lines.back();
  EXPECT_EQ(error["kind"], "error");
  EXPECT_EQ(error["where"], "bench.command");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("exited with 127"));
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("no-such-tool-perfwatch: not found"));
}

TEST(CommandAdapter, APatternThatMatchesNothingNamesTheFieldAndQuotesTheLastLine) {
  json bench = throughput_bench();
  bench["extract"]["tokens_per_s"]["regex"] = "tok/s=([0-9]+)";
  auto input = standard_input();
  auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  json error = run.lines.back();
  EXPECT_EQ(error["where"], "bench.extract.tokens_per_s.regex");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("matches no line"));
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("the last: '[ctas64] done'"));
  EXPECT_THAT(run.log, HasSubstr("bench.extract.tokens_per_s.regex"));
}

TEST(CommandAdapter, ANonNumericValueNamesTheFieldAndQuotesTheLine) {
  auto input = standard_input();
  auto run = run_adapter("command", throughput_bench({{"SAY", "fast"}}), input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  json error = run.lines.back();
  EXPECT_EQ(error["where"], "bench.extract.tokens_per_s.regex");
  // The regex accepts digits and dots only, so "fast" does not match at all;
  // a looser one captures it and is refused for not being a number.
  json loose = throughput_bench({{"SAY", "1,234.5"}});
  loose["extract"]["tokens_per_s"]["regex"] = "throughput: (\\S+) tokens/s";
  run = run_adapter("command", loose, input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 1);
  error = run.lines.back();
  EXPECT_EQ(error["where"], "bench.extract.tokens_per_s.regex");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("captured '1,234.5', which is not a number"));
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("'[ctas64] throughput: 1,234.5 tokens/s'"));
}

TEST(CommandAdapter, JsonPointerFailuresNameTheFieldAndQuoteTheJsonLine) {
  json bench = {{"adapter", "command"},
                {"command", "./json_metrics.sh {batch}"},
                {"extract", {{"tokens_per_s", {{"json_pointer", "/result/missing"}}}}}};
  std::vector<json> input = {plan({{{"name", "base"}, {"params", json::object()}}}, conc_points(), json::array({tokens_metric()}),
                                  "tokens_per_s"),
                             measure("base", "C1")};
  auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.lines.back()["where"], "bench.extract.tokens_per_s.json_pointer");
  EXPECT_THAT(run.lines.back()["message"].get<std::string>(),
              HasSubstr("'/result/missing' is not in the JSON line '{\"result\": {\"tokens_per_s\": 500"));

  bench["extract"]["tokens_per_s"]["json_pointer"] = "/result/name";
  run = run_adapter("command", bench, input, tests_dir() / "scripts");
  EXPECT_THAT(run.lines.back()["message"].get<std::string>(), HasSubstr("is \"b1\" (string), not a number"));
}

TEST(CommandAdapter, ACommandFailingAtOnePointIsIncorrectThereAndTheRunGoesOn) {
  auto input = standard_input();
  input.push_back(measure("ctas64", "C8"));  // asked again: answered with skipped
  input.push_back(measure("ctas128", "C1"));
  auto run = run_adapter("command", throughput_bench({{"FAIL_AT_CONC", "8"}}), input, tests_dir() / "scripts");
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  json check = run.check("ctas64", "C8");
  EXPECT_EQ(check["status"], "incorrect");
  EXPECT_THAT(check["reason"].get<std::string>(), HasSubstr("exited with code 3"));
  EXPECT_THAT(check["reason"].get<std::string>(), HasSubstr("CUDA error: out of memory"));
  EXPECT_EQ(check["detail"]["exit_code"], 3);
  EXPECT_EQ(run.check("ctas128", "C8")["status"], "incorrect");
  auto skipped = run.of_kind("skipped");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0]["status"], "incorrect");
  EXPECT_EQ(run.trials("ctas128", "C1").size(), 2u);
  EXPECT_EQ(run.of_kind("footer").at(0)["trials"], 5);
}

TEST(CommandAdapter, AZeroValueIsIncorrectNotATrial) {
  auto input = standard_input();
  auto run = run_adapter("command", throughput_bench({{"ZERO_AT_CONC", "8"}}), input, tests_dir() / "scripts");
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.check("ctas64", "C8")["status"], "incorrect");
  EXPECT_THAT(run.check("ctas64", "C8")["reason"].get<std::string>(), HasSubstr("tokens_per_s = 0"));
}

TEST(CommandAdapter, ATrialThatRunsPastTheLimitIsKilledAndReported) {
  json bench = throughput_bench();
  bench["command"] = "sleep 20; ./throughput.sh --conc {batch}";
  bench["trial_timeout_s"] = 0.3;
  bench["idle_timeout_s"] = 5;
  std::vector<json> input = {plan(ctas_variants(), conc_points(), json::array({tokens_metric()}), "tokens_per_s"),
                             measure("ctas64", "C1")};
  auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.check("ctas64", "C1")["status"], "incorrect");
  EXPECT_THAT(run.check("ctas64", "C1")["reason"].get<std::string>(),
              HasSubstr("timed out after 0.3 s (bench.trial_timeout_s) and was killed"));
}

TEST(CommandAdapter, AFailureAfterAPassingCheckIsASkippedLineAndTheRunGoesOn) {
  // Succeeds twice (the check and one trial), then fails: the third
  // execution's request is answered with skipped, and so is the next.
  TempDir dir;
  write_file(dir / "flaky.sh",
             "#!/bin/sh\n"
             "n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count\n"
             "[ $n -le 2 ] || { echo 'lost the connection to the server' >&2; exit 9; }\n"
             "echo 'throughput: 100 tokens/s'\n");
  shell("chmod +x " + (dir / "flaky.sh").string());
  json bench = {{"adapter", "command"},
                {"command", "./flaky.sh"},
                {"extract", {{"tokens_per_s", {{"regex", "throughput: ([0-9.]+)"}}}}}};
  std::vector<json> input = {plan({{{"name", "base"}, {"params", json::object()}}}, conc_points(), json::array({tokens_metric()}),
                                  "tokens_per_s"),
                             measure("base", "C1"), measure("base", "C1"), measure("base", "C1")};
  auto run = run_adapter("command", bench, input, dir.path());
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  auto skipped = run.of_kind("skipped");
  ASSERT_EQ(skipped.size(), 2u) << run.dump();
  EXPECT_EQ(skipped[0]["status"], "unknown");
  EXPECT_THAT(skipped[0]["reason"].get<std::string>(), HasSubstr("exited with code 9"));
  EXPECT_THAT(skipped[0]["reason"].get<std::string>(), HasSubstr("lost the connection"));

  // Asked for two trials at once, the second failing: the protocol cannot
  // say "fewer than asked", so the run ends with an error naming the cell.
  std::filesystem::remove(dir / "count");
  input = {input[0], measure("base", "C1", 3)};
  run = run_adapter("command", bench, input, dir.path());
  EXPECT_EQ(run.exit_code, 1) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.trials("base", "C1").size(), 1u);
  EXPECT_EQ(run.lines.back()["where"], "variant 'base' at point 'C1'");
  EXPECT_THAT(run.lines.back()["message"].get<std::string>(), HasSubstr("failed after 1 of the 3 trials"));
}

TEST(CommandAdapter, BadRulesAndTemplatesAreErrorsNamingTheField) {
  auto input = standard_input();
  auto error_of = [&](const json& bench) {
    auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
    EXPECT_EQ(run.exit_code, 1) << run.dump();
    EXPECT_EQ(run.lines.size(), 1u) << run.dump();
    return run.lines.empty() ? json() : run.lines[0];
  };
  json b = throughput_bench();
  b["extract"]["tokens_per_s"]["regex"] = "(throughput): ([0-9.]+)";
  json e = error_of(b);
  EXPECT_EQ(e["where"], "bench.extract.tokens_per_s.regex");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("has 2 capture groups"));

  b = throughput_bench();
  b["extract"]["tokens_per_s"]["regex"] = "throughput: ([0-9.]+";
  EXPECT_THAT(error_of(b)["message"].get<std::string>(), HasSubstr("not an ECMAScript regular expression"));

  b = throughput_bench();
  b["extract"]["tok_s"] = b["extract"]["tokens_per_s"];
  e = error_of(b);
  EXPECT_EQ(e["where"], "bench.extract.tok_s");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("not a declared metric (declared: tokens_per_s)"));

  b = throughput_bench();
  b["extract"] = {{"tokens_per_s", {{"regex", "a(b)"}, {"json_pointer", "/x"}}}};
  e = error_of(b);
  EXPECT_EQ(e["where"], "PERFWATCH_ADAPTER_BENCH: bench.extract.tokens_per_s");

  b = throughput_bench();
  b["command"] = "./throughput.sh --conc {concurrency}";
  e = error_of(b);
  EXPECT_EQ(e["where"], "bench.command");
  EXPECT_THAT(e["message"].get<std::string>(),
              HasSubstr("{concurrency} names no axis of point 'C1' and no param of variant 'ctas64' (they have: "
                        "batch, num_warps, target_ctas; and {variant})"));

  b = throughput_bench();
  b["env"]["TARGET_CTAS"] = "{ctas}";
  EXPECT_EQ(error_of(b)["where"], "bench.env.TARGET_CTAS");

  b = throughput_bench();
  b.erase("extract");
  EXPECT_EQ(error_of(b)["where"], "bench.extract");
}

TEST(CommandAdapter, AValueTheShellWouldSplitIsRefusedInTheCommandButNotInTheEnvironment) {
  json points = {{{"id", "a"}, {"axes", {{"batch", 1}, {"model", "llama 70b"}}}}};
  std::vector<json> input = {plan(ctas_variants(), points, json::array({tokens_metric()}), "tokens_per_s"), measure("ctas64", "a")};
  json bench = throughput_bench({{"MODEL", "{model}"}});
  auto run = run_adapter("command", bench, input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(run.check("ctas64", "a")["detail"]["env"]["MODEL"], "llama 70b");

  bench["command"] = "./throughput.sh --conc {batch} --label {model}";
  run = run_adapter("command", bench, input, tests_dir() / "scripts");
  EXPECT_EQ(run.exit_code, 1) << run.dump();
  EXPECT_EQ(run.lines.at(0)["where"], "bench.command");
  EXPECT_THAT(run.lines.at(0)["message"].get<std::string>(),
              HasSubstr("the value 'llama 70b' of axis model has characters the shell would interpret"));
}

}  // namespace
}  // namespace perfwatch::testing
