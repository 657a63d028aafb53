// The google-benchmark adapter through `perfwatch adapter --kind
// google-benchmark`, against a real suite built with Debian's
// libbenchmark-dev (gbench_suite/decode_bench.cpp: BM_decode<BlockT>/batch,
// BlockT the variants, batch the axis), plus its JSON reader in-process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "adapters/google_benchmark.h"
#include "adapters/host.h"
#include "tests/adapters/adapter_harness.h"

namespace perfwatch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json metrics() {
  return {{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}},
          {{"name", "tokens_per_s"}, {"unit", "tokens/s"}, {"direction", "higher_is_better"}},
          {{"name", "cpu_us"}, {"unit", "us"}, {"direction", "lower_is_better"}}};
}

json block_variants(std::vector<int> blocks) {
  json out = json::array();
  for (int b : blocks) out.push_back({{"name", "b" + std::to_string(b)}, {"params", {{"block_t", b}}}});
  return out;
}

json batch_points() {
  return {{{"id", "C1"}, {"axes", {{"batch", 1}}}}, {{"id", "C8"}, {"axes", {{"batch", 8}}}}};
}

json suite_bench(const json& fields = {{"tokens_per_s", "tokens_per_s"}, {"cpu_us", "cpu_time"}}) {
  return {{"adapter", "google-benchmark"},
          {"command", GBENCH_SUITE_PATH},
          {"google_benchmark", {{"name", "BM_decode<{block_t}>/{batch}/real_time"}, {"fields", fields}}}};
}

// Short trials: this is about the adapter, not the suite's figures.
json fast_timing() { return {{"timing", {{"min_trial_ms", 2}, {"warmup_ms", 1}}}}; }

TEST(GoogleBenchmarkAdapter, RepetitionsOfTheNamedBenchmarkAreTrials) {
  json variants = block_variants({16, 32});
  variants[0]["params"]["note"] = "tile size only";
  std::vector<json> input = {plan(variants, batch_points(), metrics(), "time_us", fast_timing()),
                             measure("b16", "C1"), measure("b32", "C1"), measure("b16", "C1", 3),
                             measure("b16", "C8"), measure("b32", "C8", 2)};
  auto run = run_adapter("google-benchmark", suite_bench(), input, std::filesystem::temp_directory_path());
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.trials("b16", "C1").size(), 4u);
  EXPECT_EQ(run.trials("b32", "C8").size(), 2u);

  for (const auto& t : run.of_kind("trial")) {
    const double time_us = t["metrics"]["time_us"], tokens = t["metrics"]["tokens_per_s"];
    const double batch = t["point"] == "C8" ? 8 : 1;
    // real_time came in ns and left in us: the rate counter (batch rows per
    // iteration, over real time) is batch * 1e6 / time_us exactly.
    EXPECT_NEAR(tokens, batch * 1e6 / time_us, 1e-6 * tokens) << t.dump();
    EXPECT_GT(t["metrics"]["cpu_us"].get<double>(), 0);
    EXPECT_GE(t["steps"].get<int>(), 1);
  }
  EXPECT_EQ(run.check("b16", "C8")["detail"]["benchmark"], "BM_decode<16>/8/real_time");
  EXPECT_EQ(run.check("b16", "C8")["detail"]["time_unit"], "ns");

  json header = run.of_kind("header").at(0);
  EXPECT_EQ(header["timer"], "external");
  EXPECT_EQ(header["device"]["name"], adapters::host_facts().host_name);
  EXPECT_EQ(header["build"]["binary_hash"], *adapters::sha256_file(GBENCH_SUITE_PATH));
  EXPECT_EQ(run.of_kind("variant").at(0)["ignored_params"], json({"note"}));
  EXPECT_THAT(run.log, HasSubstr("lists 6 benchmarks"));
  EXPECT_THAT(run.log, HasSubstr("library_build_type="));
}

TEST(GoogleBenchmarkAdapter, ABenchmarkThatReportsAnErrorIsInfeasible) {
  std::vector<json> input = {plan(block_variants({16, 64}), batch_points(), metrics(), "time_us", fast_timing()),
                             measure("b64", "C1"), measure("b64", "C8"), measure("b16", "C8"), measure("b64", "C8")};
  auto run = run_adapter("google-benchmark", suite_bench(), input, std::filesystem::temp_directory_path());
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.check("b64", "C1")["status"], "ok");
  json check = run.check("b64", "C8");
  EXPECT_EQ(check["status"], "infeasible");
  EXPECT_THAT(check["reason"].get<std::string>(), HasSubstr("errored: BLOCK_T=64 needs 232 KiB of shared memory"));
  auto skipped = run.of_kind("skipped");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0]["status"], "infeasible");
}

TEST(GoogleBenchmarkAdapter, ATemplateThatNamesNoBenchmarkIsAnErrorWithTheNearestNames) {
  json bench = suite_bench();
  bench["google_benchmark"]["name"] = "BM_decode<{block_t}>/{batch}";  // forgot /real_time
  std::vector<json> input = {plan(block_variants({16, 32}), batch_points(), metrics(), "time_us", fast_timing()),
                             measure("b16", "C1")};
  auto run = run_adapter("google-benchmark", bench, input, std::filesystem::temp_directory_path());
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  ASSERT_EQ(run.lines.size(), 1u) << run.dump();
  EXPECT_EQ(run.lines[0]["where"], "bench.google_benchmark.name");
  const std::string message = run.lines[0]["message"];
  EXPECT_THAT(message, HasSubstr("names no benchmark of"));
  EXPECT_THAT(message, HasSubstr("it gives 'BM_decode<16>/1'"));
  EXPECT_THAT(message, HasSubstr("nearest names the binary has: 'BM_decode<16>/1/real_time'"));
}

TEST(GoogleBenchmarkAdapter, AVariantTheSuiteDoesNotHaveIsInfeasibleWithTheNearestNames) {
  std::vector<json> input = {plan(block_variants({16, 128}), batch_points(), metrics(), "time_us", fast_timing()),
                             measure("b128", "C1"), measure("b16", "C1"), measure("b128", "C1")};
  auto run = run_adapter("google-benchmark", suite_bench(), input, std::filesystem::temp_directory_path());
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  json check = run.check("b128", "C1");
  EXPECT_EQ(check["status"], "infeasible");
  EXPECT_THAT(check["reason"].get<std::string>(),
              HasSubstr("no benchmark named 'BM_decode<128>/1/real_time' (bench.google_benchmark.name "
                        "'BM_decode<{block_t}>/{batch}/real_time'); nearest: 'BM_decode<16>/1/real_time'"));
  EXPECT_THAT(run.log, HasSubstr("no benchmark 'BM_decode<128>/8/real_time' (variant b128, point C8)"));
}

TEST(GoogleBenchmarkAdapter, ConfigurationErrorsNameTheField) {
  std::vector<json> input = {plan(block_variants({16}), batch_points(), metrics(), "tokens_per_s", fast_timing()),
                             measure("b16", "C1")};
  auto first_error = [&](const json& bench) {
    auto run = run_adapter("google-benchmark", bench, input, std::filesystem::temp_directory_path());
    EXPECT_EQ(run.exit_code, 1) << run.dump();
    EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
    return run.lines.empty() ? json() : run.lines.back();
  };
  // A throughput judged by the default field (a time) would be upside down.
  json e = first_error(suite_bench(json::object()));
  EXPECT_EQ(e["where"], "bench.google_benchmark.fields");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("higher is better"));

  json bench = suite_bench({{"tokens_per_s", "tokens"}});
  e = first_error(bench);
  EXPECT_EQ(e["where"], "bench.google_benchmark.fields.tokens_per_s");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("has no field 'tokens'"));
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("'tokens_per_s'"));

  bench = suite_bench();
  bench["command"] = "./build/no_such_bench";
  e = first_error(bench);
  EXPECT_EQ(e["where"], "bench.command");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("no such program"));

  bench = suite_bench();
  bench.erase("google_benchmark");
  EXPECT_EQ(first_error(bench)["where"], "bench.google_benchmark");
}

TEST(GoogleBenchmarkJson, BareNaNAndInfinityBecomeNullOutsideStrings) {
  auto doc = adapters::parse_benchmark_json(
      R"({"context": {"host_name": "NaN-box"}, "benchmarks": [{"name": "BM_x/Infinity", "ratio": NaN, "neg": -Infinity, "ok": 1.5e+03}]})");
  ASSERT_TRUE(doc) << doc.error().to_string();
  const json& b = (*doc)["benchmarks"][0];
  EXPECT_TRUE(b["ratio"].is_null());
  EXPECT_TRUE(b["neg"].is_null());
  EXPECT_EQ(b["ok"], 1500.0);
  EXPECT_EQ(b["name"], "BM_x/Infinity");
  EXPECT_EQ((*doc)["context"]["host_name"], "NaN-box");
  EXPECT_FALSE(adapters::parse_benchmark_json("Failed to match any benchmarks"));
  EXPECT_FALSE(adapters::parse_benchmark_json(R"({"context": {}})"));
}

TEST(GoogleBenchmarkJson, TheExactFilterEscapesRegexCharactersOnly) {
  EXPECT_EQ(adapters::exact_filter("BM_decode<16>/8/real_time"), "^BM_decode<16>/8/real_time$");
  EXPECT_EQ(adapters::exact_filter("BM_f(x)/1.5/threads:2"), "^BM_f\\(x\\)/1\\.5/threads:2$");
}

}  // namespace
}  // namespace perfwatch::testing
