// The nvbench adapter through `perfwatch adapter --kind nvbench`, against a
// fake NVBench binary (fake_nvbench.cpp) that writes the JSON shapes of
// NVBench's json_printer.cu: CI has no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/adapters/adapter_harness.h"

namespace perfwatch::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json metrics() {
  return {{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}},
          {{"name", "elems_per_s"}, {"unit", "elements/s"}, {"direction", "higher_is_better"}}};
}

json variants(std::vector<std::string> blocks) {
  json out = json::array();
  for (const auto& b : blocks) out.push_back({{"name", "b" + b}, {"params", {{"block_t", b}}}});
  return out;
}

json points() {
  return {{{"id", "C1"}, {"axes", {{"batch", 1}}}}, {{"id", "C8"}, {"axes", {{"batch", 8}}}}};
}

json nv_bench() {
  return {{"adapter", "nvbench"},
          {"command", FAKE_NVBENCH_PATH},
          {"nvbench",
           {{"benchmark", "decode"},
            {"axes", {{"block_t", "BlockT"}, {"batch", "Batch"}}},
            {"fields", {{"elems_per_s", "nv/cold/bw/item_rate"}}}}}};
}

TEST(NvbenchAdapter, EachExecutionIsATrialWithTheAxesPassed) {
  json vs = variants({"16", "32"});
  vs[1]["params"]["num_warps"] = 8;  // no such NVBench axis: ignored, and said so
  std::vector<json> input = {plan(vs, points(), metrics(), "time_us"), measure("b16", "C1", 2), measure("b32", "C8"),
                             measure("b32", "C1")};
  auto run = run_adapter("nvbench", nv_bench(), input, std::filesystem::temp_directory_path());
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  // The fake's GPU time is Batch * (1 + BlockT / 64) us: right axes, right unit.
  auto t = run.trials("b16", "C1");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_NEAR(t[0]["metrics"]["time_us"].get<double>(), 1.25, 1e-9);
  EXPECT_NEAR(t[1]["metrics"]["elems_per_s"].get<double>(), 2048 / 1.25e-6, 1);
  EXPECT_EQ(t[0]["steps"], 1234);
  EXPECT_EQ(t[0]["clock_mhz"], 1755);
  EXPECT_NEAR(run.trials("b32", "C8").at(0)["metrics"]["time_us"].get<double>(), 12, 1e-9);
  EXPECT_EQ(run.check("b32", "C8")["detail"]["state"], "Device=0 BlockT=32 Batch=8 Dtype=bf16");

  json header = run.of_kind("header").at(0);
  EXPECT_EQ(header["backend"], "cuda");
  EXPECT_EQ(header["device"]["name"], "NVIDIA H200 (fake)");
  EXPECT_EQ(header["device"]["multiprocessors"], 132);
  EXPECT_EQ(header["device"]["compute_capability"], "9.0");
  EXPECT_EQ(header["device"]["sm_clock_mhz"], 1980);
  EXPECT_EQ(run.of_kind("variant").at(1)["ignored_params"], json({"num_warps"}));
  EXPECT_THAT(run.log, HasSubstr("-b decode --devices 0 -a Batch=1 -a BlockT=16 --json"));
}

TEST(NvbenchAdapter, ASkippedStateIsInfeasible) {
  std::vector<json> input = {plan(variants({"64"}), points(), metrics(), "time_us"), measure("b64", "C8"),
                             measure("b64", "C8"), measure("b64", "C1")};
  auto run = run_adapter("nvbench", nv_bench(), input, std::filesystem::temp_directory_path());
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.check("b64", "C8")["status"], "infeasible");
  EXPECT_THAT(run.check("b64", "C8")["reason"].get<std::string>(), HasSubstr("not enough shared memory"));
  EXPECT_EQ(run.check("b64", "C1")["status"], "ok");
}

TEST(NvbenchAdapter, AFailingBinaryIsIncorrectWithItsMessage) {
  json bench = nv_bench();
  bench["env"] = {{"FAKE_NVBENCH_FAIL", "1"}};
  std::vector<json> input = {plan(variants({"16"}), points(), metrics(), "time_us"), measure("b16", "C1")};
  auto run = run_adapter("nvbench", bench, input, std::filesystem::temp_directory_path());
  ASSERT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  EXPECT_EQ(run.check("b16", "C1")["status"], "incorrect");
  EXPECT_THAT(run.check("b16", "C1")["reason"].get<std::string>(), HasSubstr("an illegal memory access"));
}

TEST(NvbenchAdapter, TheManifestIsCheckedAgainstTheBinarysBenchmarksAndAxes) {
  std::vector<json> input = {plan(variants({"16"}), points(), metrics(), "time_us"), measure("b16", "C1")};
  auto error_of = [&](const json& bench, const json& p) {
    std::vector<json> in = {p, input[1]};
    auto run = run_adapter("nvbench", bench, in, std::filesystem::temp_directory_path());
    EXPECT_EQ(run.exit_code, 1) << run.dump();
    EXPECT_EQ(run.lines.size(), 1u) << run.dump();
    return run.lines.empty() ? json() : run.lines[0];
  };
  json b = nv_bench();
  b["nvbench"]["benchmark"] = "decod";
  json e = error_of(b, input[0]);
  EXPECT_EQ(e["where"], "bench.nvbench.benchmark");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("nearest: 'decode'"));

  b = nv_bench();
  b["nvbench"].erase("benchmark");
  e = error_of(b, input[0]);
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("the binary has 2 benchmarks ('decode', 'copy')"));

  b = nv_bench();
  b["nvbench"]["axes"].erase("batch");
  e = error_of(b, input[0]);
  EXPECT_EQ(e["where"], "sweep.axes.batch");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("map it in bench.nvbench.axes"));

  // A variant that does not set BlockT would measure all three types at once.
  e = error_of(nv_bench(), plan({{{"name", "any"}, {"params", json::object()}}}, points(), metrics(), "time_us"));
  EXPECT_EQ(e["where"], "bench.nvbench.axes");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("'BlockT' of 'decode' has 3 values"));

  e = error_of(nv_bench(), plan(variants({"24"}), points(), metrics(), "time_us"));
  EXPECT_EQ(e["where"], "variant 'b24': params.block_t");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("its types: '16', '32', '64'"));
}

}  // namespace
}  // namespace perfwatch::testing
