// The bench object of PERFWATCH_ADAPTER_BENCH (adapters/settings.h), and the
// adapter refusing to start without it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/settings.h"
#include "tests/adapters/adapter_harness.h"

namespace perfwatch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string error_of(const json& bench) {
  auto s = adapters::parse_bench_settings(bench.dump());
  return s ? "" : s.error().to_string();
}

TEST(AdapterSettings, ErrorsNameTheManifestField) {
  EXPECT_EQ(adapters::parse_bench_settings("not json").error().to_string(),
            "PERFWATCH_ADAPTER_BENCH: must hold the manifest's bench object as JSON");
  EXPECT_THAT(error_of({{"adapter", "command"}, {"command", "x"}, {"extract", {{"tokens_per_s", {{"regex", 5}}}}}}),
              HasSubstr("PERFWATCH_ADAPTER_BENCH: bench.extract.tokens_per_s.regex"));
  EXPECT_THAT(error_of({{"adapter", "command"}}), HasSubstr("PERFWATCH_ADAPTER_BENCH"));
  EXPECT_THAT(error_of({{"adapter", "cmd"}, {"command", "x"}}), HasSubstr("bench.adapter"));
  EXPECT_THAT(error_of({{"command", "x"}, {"trial_timeout_s", 400}}),
              HasSubstr("bench.trial_timeout_s: must be below bench.idle_timeout_s (300 s)"));
}

TEST(AdapterSettings, TheTrialTimeoutDefaultsBelowTheIdleTimeout) {
  auto s = adapters::parse_bench_settings(R"({"command": "x", "idle_timeout_s": 100, "env": {"A": "{a}"}})");
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_DOUBLE_EQ(s->trial_timeout_s, 90);
  EXPECT_EQ(s->env.at("A"), "{a}");
  EXPECT_EQ(s->workdir, std::filesystem::current_path());
}

TEST(AdapterSettings, TheAdapterRefusesToRunWithoutOrAgainstItsBenchObject) {
  std::vector<json> input = {plan({{{"name", "v"}, {"params", json::object()}}}, {{{"id", "p"}, {"axes", {{"x", 1}}}}},
                                  {{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}}}, "time_us")};
  auto run = run_adapter("command", nullptr, input, std::filesystem::temp_directory_path());
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_EQ(run.lines.size(), 1u) << run.dump();
  EXPECT_EQ(run.lines[0]["where"], "PERFWATCH_ADAPTER_BENCH");
  EXPECT_EQ(protocol_problems(run, input), "");

  run = run_adapter("command", {{"adapter", "google-benchmark"}, {"command", "x"}}, input,
                    std::filesystem::temp_directory_path());
  ASSERT_EQ(run.lines.size(), 1u) << run.dump();
  EXPECT_EQ(run.lines[0]["where"], "bench.adapter");
  EXPECT_THAT(run.lines[0]["message"].get<std::string>(), HasSubstr("this is the command adapter"));
}

}  // namespace
}  // namespace perfwatch::testing
