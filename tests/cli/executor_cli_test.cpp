// The local-gpus executor at work, as a user runs it: `perfwatch watch` and
// `perfwatch noise` with an executor config, on fake GPUs (a stand-in
// nvidia-smi lists them; the fake bench is told by CUDA_VISIBLE_DEVICES
// which one it is on, as a CUDA bench is). The executor cannot tell.
#include <sys/stat.h>
#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "tests/support/git_fixture.h"
#include "tests/support/temp_dir.h"

namespace perfwatch {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class LocalGpusCli : public ::testing::Test {
 protected:
  json manifest(const json& env) {
    return {{"schema_version", 1},
            {"build", {{"command", "true"}}},
            {"paths", {"src/", "perfwatch.json"}},
            {"bench", {{"command", FAKE_BENCH_PATH}, {"timeout_s", 60}, {"idle_timeout_s", 20}, {"env", env}}},
            {"variants", {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}}}},
                          {{"name", "w8"}, {"params", {{"block_t", 32}, {"num_warps", 8}}}}}},
            {"sweep", {{"batch", {1, 8}}}},
            {"trials", {{"min", 3}, {"max", 4}, {"target_rel_ci", 0.5}, {"budget_s", 30}}},
            {"runs", {{"per_commit", 4}, {"max_per_commit", 6}}}};
  }
  // The documented config (examples/executors/local-gpus.json, README's
  // "Run it on a GPU box") over fake GPUs of one model: only where
  // nvidia-smi is differs.
  std::string executor(const std::vector<std::string>& uuids) {
    auto smi = dir_ / "nvidia-smi";
    std::ofstream script(smi);
    script << "#!/bin/sh\n";
    for (std::size_t i = 0; i < uuids.size(); ++i) script << "echo '" << i << ", " << uuids[i] << ", Fake H200'\n";
    script.close();
    ::chmod(smi.c_str(), 0755);
    auto config = dir_ / "executor.json";
    std::ifstream documented(EXAMPLE_LOCAL_GPUS_CONFIG);
    json doc = json::parse(documented);
    doc["nvidia_smi"] = smi.string();
    std::ofstream(config) << doc.dump();
    return config.string();
  }
  std::string pw(const std::string& args) {
    return testing::shell(std::string(PERFWATCH_BIN) + " --db '" + (dir_ / "pw.db").string() + "' " + args + " 2>>'" +
                          (dir_ / "stderr.log").string() + "'");
  }
  std::string stderr_log() {
    std::ifstream in(dir_ / "stderr.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string testbed_name() {
    auto db = store::Database::open(dir_ / "pw.db");
    auto beds = store::RunReader(*db).testbeds();
    return beds && !beds->empty() ? beds->front().name : "";
  }
  std::vector<store::RunRecord> runs_of(const std::string& sha) {
    auto db = store::Database::open(dir_ / "pw.db");
    EXPECT_TRUE(db.has_value());
    auto repos = store::RepoReader(*db).repos();
    auto commit = store::RepoReader(*db).find_commit(repos->front().id, sha);
    EXPECT_TRUE(commit && *commit);
    return *store::RunReader(*db).runs_of_commit((*commit)->id);
  }

  testing::GitFixture repo_;
  testing::TempDir dir_{"perfwatch-gpus"};
};

TEST_F(LocalGpusCli, WatchSpreadsACommitsRunsOverTheGpusInParallel) {
  const std::string spans = (dir_ / "spans.log").string();
  json env = {{"FAKE_BENCH_TRIAL_MS", "40"}, {"FAKE_BENCH_SPAN_LOG", spans}};
  std::string a = repo_.commit({{"perfwatch.json", manifest(env).dump(2)}, {"src/k.c", "1"}}, "baseline");
  pw("watch --repo '" + repo_.path().string() + "' --once --executor '" + executor({"GPU-fake-a", "GPU-fake-b"}) + "'");

  auto runs = runs_of(a);
  std::map<std::string, int> per_gpu;
  std::set<std::optional<store::TestbedId>> testbeds;
  for (const auto& r : runs) {
    ASSERT_EQ(r.status, store::RunStatus::kOk) << r.message << "\n" << stderr_log();
    ++per_gpu[r.device_uuid];
    testbeds.insert(r.testbed_id);
    EXPECT_EQ(r.placement["executor"], "local-gpus");
    EXPECT_EQ(r.placement["gpu_uuid"], r.device_uuid);
  }
  ASSERT_EQ(runs.size(), 4u) << stderr_log();
  // Both GPUs measured it (which took how many runs depends on which was
  // free first), as one testbed: the GPUs of one model are judged together.
  EXPECT_EQ(per_gpu.size(), 2u);
  EXPECT_TRUE(per_gpu.count("GPU-fake-a") && per_gpu.count("GPU-fake-b"));
  EXPECT_EQ(testbeds.size(), 1u);
  {
    auto db = store::Database::open(dir_ / "pw.db");
    auto bed = store::RunReader(*db).testbed(**testbeds.begin());
    ASSERT_TRUE(bed.has_value());
    EXPECT_THAT(bed->name, ::testing::EndsWith("/cpu/Fake H200"));
  }

  // Each bench saw only its GPU, and two of them ran at the same time.
  std::ifstream in(spans);
  struct Span { std::string gpu; long long start, end; };
  std::vector<Span> seen;
  for (std::string pid, gpu; in >> pid >> gpu;) {
    Span s{gpu, 0, 0};
    in >> s.start >> s.end;
    seen.push_back(s);
  }
  ASSERT_EQ(seen.size(), 4u);
  bool overlapped = false;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_THAT(seen[i].gpu, ::testing::StartsWith("GPU-fake-"));
    for (std::size_t j = i + 1; j < seen.size(); ++j)
      overlapped = overlapped || (seen[i].start < seen[j].end && seen[j].start < seen[i].end && seen[i].gpu != seen[j].gpu);
  }
  EXPECT_TRUE(overlapped) << "no two benches ran at once";
  EXPECT_THAT(stderr_log(), HasSubstr("executor=local-gpus"));

  // Queries take the testbed by name; an unknown one is an error that lists them.
  std::string history = pw("query history --variant base --point C1 --json --testbed '" + testbed_name() + "'");
  EXPECT_THAT(history, HasSubstr("\"testbed_id\""));
  const std::string bad = std::string(PERFWATCH_BIN) + " --db '" + (dir_ / "pw.db").string() +
                          "' query flags --testbed nope 2>'" + (dir_ / "bad.txt").string() + "'";
  EXPECT_EQ(WEXITSTATUS(std::system(bad.c_str())), 2);
  std::ifstream bad_in(dir_ / "bad.txt");
  std::string said(std::istreambuf_iterator<char>(bad_in), {});
  EXPECT_THAT(said, HasSubstr("--testbed nope"));
  EXPECT_THAT(said, HasSubstr("use one of: " + testbed_name()));
}

TEST_F(LocalGpusCli, NoiseSpreadsOverTheGpusAndLeavesTheSlowOneOut) {
  json env = {{"FAKE_BENCH_RUN_NOISE", "0.002"}, {"FAKE_BENCH_SLOW_GPU", "GPU-fake-c:1.04"}};
  repo_.commit({{"perfwatch.json", manifest(env).dump(2)}, {"src/k.c", "1"}}, "baseline");
  std::string out = pw("noise --repo '" + repo_.path().string() + "' --runs 15 --json --executor '" +
                       executor({"GPU-fake-a", "GPU-fake-b", "GPU-fake-c"}) + "'");
  json doc = json::parse(out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out << stderr_log();
  EXPECT_EQ(doc["ok_runs"], 15);
  ASSERT_EQ(doc["devices"].size(), 3u) << doc.dump(2);
  int runs = 0;
  for (const auto& d : doc["devices"]) {
    EXPECT_GE(d["runs"].get<int>(), 2) << d.dump();  // spread: each GPU is free in turn
    runs += d["runs"].get<int>();
    EXPECT_EQ(d["off"], d["device"] == "GPU-fake-c") << d.dump();
  }
  EXPECT_EQ(runs, 15);
  ASSERT_FALSE(doc["bands"].empty());
  const std::string method = doc["bands"][0]["method"];
  EXPECT_THAT(method, HasSubstr("runs spread over 2 GPUs"));
  EXPECT_THAT(method, HasSubstr("GPU-fake-c left out"));
}

}  // namespace
}  // namespace perfwatch
