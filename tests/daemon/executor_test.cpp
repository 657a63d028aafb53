// The executors' set-up and the parts of them that read another program's
// words: nvidia-smi's GPU listing, scontrol's job records, the launcher
// prefix. The executors at work are tested end to end: local-gpus with fake
// GPUs in tests/cli/executor_cli_test.cpp, slurm against a real single-node
// Slurm in tests/slurm/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <sys/stat.h>

#include "daemon/executor.h"
#include "daemon/slurm.h"
#include "runner/launcher.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::daemon {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

TEST(GpuList, ParsesNvidiaSmiCsv) {
  auto gpus = parse_gpu_list("0, GPU-8f1e, NVIDIA H200\n1, GPU-77aa, NVIDIA H200\n\n2, GPU-c0de, NVIDIA RTX PRO 6000\n");
  ASSERT_TRUE(gpus.has_value()) << gpus.error().to_string();
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[2].index, 2);
  EXPECT_EQ((*gpus)[2].uuid, "GPU-c0de");
  EXPECT_EQ((*gpus)[2].name, "NVIDIA RTX PRO 6000");
}

TEST(GpuList, NamesTheLineItCannotRead) {
  auto bad = parse_gpu_list("0, GPU-8f1e, NVIDIA H200\nNo devices were found\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().to_string(), HasSubstr("line 2"));
  EXPECT_THAT(bad.error().to_string(), HasSubstr("No devices were found"));
  auto index = parse_gpu_list("x, GPU-1, H200\n");
  ASSERT_FALSE(index.has_value());
  EXPECT_THAT(index.error().to_string(), HasSubstr("'x' is not a GPU index"));
}

class LocalGpus : public ::testing::Test {
 protected:
  // A stand-in for nvidia-smi that lists `listing`: the executor cannot tell.
  std::string fake_smi(const std::string& listing) {
    auto path = dir_.path() / "nvidia-smi";
    std::ofstream(path) << "#!/bin/sh\ncat <<'EOF'\n" << listing << "EOF\n";
    ::chmod(path.c_str(), 0755);
    return path.string();
  }
  testing::TempDir dir_{"perfwatch-executor"};
};

TEST_F(LocalGpus, OneTestbedPerModelAndOneSlotPerGpuPinnedByUuid) {
  json config = {{"version", 1}, {"executor", "local-gpus"},
                 {"nvidia_smi", fake_smi("0, GPU-a, Fake H200\n1, GPU-b, Fake RTX\n2, GPU-c, Fake H200\n")}};
  auto e = make_executor(config, "executor.json", "box1");
  ASSERT_TRUE(e.has_value()) << e.error().to_string();
  EXPECT_EQ(e->kind, "local-gpus");
  ASSERT_EQ(e->testbeds.size(), 2u);
  EXPECT_EQ(e->testbeds[0].name, "Fake H200");
  EXPECT_EQ(e->testbeds[0].description, "2 x Fake H200 (gpus 0,2)");
  ASSERT_EQ(e->testbeds[0].slots.size(), 2u);
  EXPECT_EQ(e->testbeds[1].name, "Fake RTX");
  Placement p = e->testbeds[0].slots[1]->place("perfwatch-run-9", false);
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "GPU-c");
  EXPECT_EQ(p.device_uuid, "GPU-c");
  EXPECT_EQ(p.where["gpu_index"], 2);
  EXPECT_EQ(p.testbed_name, "{host}/{backend}/Fake H200");
  EXPECT_TRUE(p.launcher.empty());
  // A build is not pinned: it needs no GPU.
  EXPECT_TRUE(e->testbeds[0].slots[1]->place("b", true).env.empty());
}

TEST_F(LocalGpus, OneModelIsTheUnnamedTestbedAndAChosenSubsetIsKept) {
  json config = {{"version", 1}, {"executor", "local-gpus"}, {"gpus", {1}},
                 {"nvidia_smi", fake_smi("0, GPU-a, Fake H200\n1, GPU-b, Fake H200\n")}};
  auto e = make_executor(config, "executor.json", "box1");
  ASSERT_TRUE(e.has_value()) << e.error().to_string();
  ASSERT_EQ(e->testbeds.size(), 1u);
  EXPECT_EQ(e->testbeds[0].name, "");  // the queue's only testbed, as with local
  ASSERT_EQ(e->testbeds[0].slots.size(), 1u);
  EXPECT_EQ(e->testbeds[0].slots[0]->place("r", false).device_uuid, "GPU-b");
}

TEST_F(LocalGpus, ErrorsSayWhatIsMissing) {
  json absent = {{"version", 1}, {"executor", "local-gpus"}, {"gpus", {0, 5}},
                 {"nvidia_smi", fake_smi("0, GPU-a, Fake H200\n1, GPU-b, Fake H200\n")}};
  auto e = make_executor(absent, "executor.json", "box1");
  ASSERT_FALSE(e.has_value());
  EXPECT_THAT(e.error().to_string(), HasSubstr("GPU 5 is not on this machine (it has 0, 1)"));

  json no_driver = {{"version", 1}, {"executor", "local-gpus"}, {"nvidia_smi", (dir_.path() / "nope").string()}};
  auto d = make_executor(no_driver, "executor.json", "box1");
  ASSERT_FALSE(d.has_value());
  EXPECT_THAT(d.error().to_string(), HasSubstr("cannot list the GPUs"));
  EXPECT_THAT(d.error().to_string(), HasSubstr("\"executor\": \"local\""));
}

TEST(ExecutorConfig, TheSchemaNamesTheField) {
  auto unknown = make_executor({{"version", 1}, {"executor", "k8s"}}, "executor.json", "h");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().to_string(), HasSubstr("executor.json"));
  EXPECT_THAT(unknown.error().to_string(), HasSubstr("executor"));
  auto no_testbeds = make_executor({{"version", 1}, {"executor", "slurm"}}, "executor.json", "h");
  ASSERT_FALSE(no_testbeds.has_value());
  EXPECT_THAT(no_testbeds.error().to_string(), HasSubstr("testbeds"));
  auto gpus_on_local = make_executor({{"version", 1}, {"executor", "local"}, {"gpus", "all"}}, "executor.json", "h");
  EXPECT_FALSE(gpus_on_local.has_value());
  auto local = make_executor({{"version", 1}, {"executor", "local"}}, "executor.json", "h");
  ASSERT_TRUE(local.has_value());
  EXPECT_EQ(local->testbeds.size(), 1u);
}

TEST(SlurmSlot, BenchJobsAskForTheGresAndBuildsDoNot) {
  SlurmSlot slot({"hopper", "h200", "gpu:h200:1", "00:20:00", {"--account=perf"}}, 2);
  Placement bench = slot.place("perfwatch-run-41", false);
  EXPECT_THAT(bench.launcher, ::testing::ElementsAre("srun", "--partition=h200", "--job-name=perfwatch-run-41",
                                                     "--ntasks=1", "--quiet", "--kill-on-bad-exit=1",
                                                     "--gres=gpu:h200:1", "--time=00:20:00", "--account=perf", "--"));
  EXPECT_EQ(bench.testbed_name, "hopper");
  EXPECT_EQ(bench.testbed_host, "slurm:h200");
  EXPECT_EQ(bench.where["job_name"], "perfwatch-run-41");
  Placement build = slot.place("perfwatch-build-x", true);
  EXPECT_THAT(build.launcher, ::testing::Not(::testing::Contains("--gres=gpu:h200:1")));
  EXPECT_EQ(slot.label(), "hopper/2");
}

TEST(SlurmJobs, TheNewestJobOfTheNameAndWhetherItWasLost) {
  const std::string shown =
      "JobId=40 JobName=perfwatch-run-7 UserId=root(0) JobState=COMPLETED Reason=None ExitCode=0:0 "
      "ReqNodeList=(null) NodeList=gpu01\n"
      "JobId=41 JobName=perfwatch-run-7 UserId=root(0) JobState=CANCELLED Reason=None ExitCode=0:15 "
      "ReqNodeList=(null) NodeList=gpu07\n"
      "JobId=42 JobName=perfwatch-run-8 JobState=TIMEOUT Reason=TimeLimit NodeList=gpu02\n";
  auto job = find_slurm_job(shown, "perfwatch-run-7");
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->id, 41);
  EXPECT_EQ(job->node, "gpu07");  // NodeList, not ReqNodeList
  EXPECT_EQ(lost_reason(*job), "CANCELLED");
  EXPECT_EQ(lost_reason(*find_slurm_job(shown, "perfwatch-run-8")), "TIMEOUT");
  EXPECT_FALSE(find_slurm_job(shown, "perfwatch-run-9").has_value());
  SlurmJob failed{.id = 1, .state = "FAILED"};
  EXPECT_FALSE(lost_reason(failed).has_value());  // the bench's own failure
  SlurmJob oom{.id = 2, .state = "OUT_OF_MEMORY"};
  EXPECT_FALSE(lost_reason(oom).has_value());
  for (const char* s : {"PREEMPTED", "NODE_FAIL", "BOOT_FAIL", "DEADLINE"}) {
    SlurmJob j{.id = 3, .state = s};
    EXPECT_EQ(lost_reason(j), s);
  }
}

TEST(Launcher, ACommandRunsThroughThePrefix) {
  runner::ProcessSpec spec;
  spec.command = "./bench --fast";
  spec.env["A"] = "1";
  auto through = runner::through({"srun", "--"}, spec);
  EXPECT_THAT(through.argv, ::testing::ElementsAre("srun", "--", "/bin/sh", "-c", "./bench --fast"));
  EXPECT_TRUE(through.command.empty());
  EXPECT_EQ(through.env.at("A"), "1");
  runner::ProcessSpec argv;
  argv.argv = {"/usr/bin/perfwatch", "adapter", "--kind", "nvbench"};
  EXPECT_THAT(runner::through({"srun", "--"}, argv).argv,
              ::testing::ElementsAre("srun", "--", "/usr/bin/perfwatch", "adapter", "--kind", "nvbench"));
  EXPECT_EQ(runner::through({}, spec).command, "./bench --fast");
}

}  // namespace
}  // namespace perfwatch::daemon
