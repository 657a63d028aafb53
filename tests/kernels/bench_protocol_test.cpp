// Runs the real mla_bench with small plans and checks what it writes: every
// line against schemas/bench/<kind>.schema.json, and the protocol's ordering
// rules (header, variants, a check before a pair's first trial, trial
// numbering per pair, skipped lines, footer), plus its failure behaviour.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schemas/schema.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct BenchRun {
  int exit_code = -1;  // 128 + signal when killed by one
  std::vector<std::string> lines;
  std::string stderr_text;
};

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "mla_bench_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

BenchRun run_bench(const std::string& input, const std::string& fault = "", const std::string& args = "") {
  TempDir dir;
  const fs::path in = dir.path() / "in.jsonl", err = dir.path() / "err.txt";
  std::ofstream(in) << input;
  std::string command;
  if (!fault.empty()) command += "MLA_BENCH_FAULT='" + fault + "' ";
  command += "exec '" MLA_BENCH_PATH "' " + args + " < '" + in.string() + "' 2> '" + err.string() + "'";
  BenchRun run;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed");
  std::string line;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    line += buffer;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      run.lines.push_back(line);
      line.clear();
    }
  }
  if (!line.empty()) run.lines.push_back(line);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  std::ifstream e(err);
  run.stderr_text.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  return run;
}

// Parses every line and validates it against its kind's schema of protocol
// `version` (schemas/bench/ or schemas/bench/v2/).
std::vector<json> validated(const BenchRun& run, int version = 1) {
  static std::map<std::string, perfwatch::schemas::Schema> schemas;
  const std::string folder = version == 2 ? "bench/v2/" : "bench/";
  std::vector<json> docs;
  for (std::size_t i = 0; i < run.lines.size(); ++i) {
    const std::string where = "stdout line " + std::to_string(i + 1);
    json doc = json::parse(run.lines[i], nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << where << " is not JSON: " << run.lines[i];
    if (doc.is_discarded()) continue;
    const std::string kind = folder + doc.value("kind", "");
    auto it = schemas.find(kind);
    if (it == schemas.end()) {
      auto schema = perfwatch::schemas::Schema::load(kind + ".schema.json");
      EXPECT_TRUE(schema.has_value()) << where << ": no schema for kind \"" << kind << "\"";
      if (!schema) continue;
      it = schemas.emplace(kind, std::move(*schema)).first;
    }
    auto status = it->second.validate(doc, where);
    EXPECT_TRUE(status.has_value()) << status.error().to_string() << "\n  " << run.lines[i];
    docs.push_back(std::move(doc));
  }
  return docs;
}

json small_plan() {
  return {{"kind", "plan"},
          {"schema_version", 1},
          {"backend", "cpu"},
          {"seed", 5},
          {"variants",
           {{{"name", "bt32"}, {"params", {{"block_t", 32}}}},
            {{"name", "bt16-many"}, {"params", {{"block_t", 16}, {"num_warps", 8}, {"target_ctas", 64}}}}}},
          {"points",
           {{{"id", "b1"}, {"batch", 1}, {"heads", 16}, {"topk", 200}},
            {{"id", "b4.h3"}, {"batch", 4}, {"heads", 3}, {"topk", 100}}}},
          {"timing", {{"min_trial_ms", 1}, {"warmup_ms", 1}, {"input_sets", 2}, {"threads", 2}}}};
}

std::string measure(const std::string& variant, const std::string& point, int trials) {
  return json{{"kind", "measure"}, {"variant", variant}, {"point", point}, {"trials", trials}}.dump() + "\n";
}

struct Request {
  std::string variant, point;
  int trials;
};

// Checks the answer to each request in order; returns the index after them.
std::size_t expect_answers(const std::vector<json>& docs, std::size_t at, const std::vector<Request>& requests,
                           const std::set<std::string>& variants, const std::set<std::string>& points,
                           const std::set<std::string>& expect_incorrect = {}) {
  std::map<std::pair<std::string, std::string>, int> trials;
  std::map<std::pair<std::string, std::string>, std::string> status;
  for (const Request& r : requests) {
    const auto pair = std::make_pair(r.variant, r.point);
    SCOPED_TRACE("request " + r.variant + " at " + r.point);
    if (!variants.count(r.variant) || !points.count(r.point)) {
      EXPECT_EQ(docs.at(at)["kind"], "skipped");
      EXPECT_EQ(docs.at(at)["status"], "unknown");
      ++at;
      continue;
    }
    if (!status.count(pair)) {
      const json& check = docs.at(at++);
      EXPECT_EQ(check["kind"], "check");
      EXPECT_EQ(check["variant"], r.variant);
      EXPECT_EQ(check["point"], r.point);
      status[pair] = check["status"].get<std::string>();
      if (expect_incorrect.count(r.variant)) {
        EXPECT_EQ(status[pair], "incorrect");
        EXPECT_FALSE(check.value("reason", "").empty());
      } else {
        EXPECT_EQ(status[pair], "ok") << check.dump();
        EXPECT_LT(check["rel_l2_o"].get<double>(), 0.01);
        EXPECT_EQ(check["nonfinite"], 0);
        EXPECT_EQ(check["input_sets"], 2);
      }
    }
    if (status[pair] != "ok") {
      const json& skipped = docs.at(at++);
      EXPECT_EQ(skipped["kind"], "skipped");
      EXPECT_EQ(skipped["status"], status[pair]);
      continue;
    }
    for (int i = 0; i < r.trials; ++i) {
      const json& trial = docs.at(at++);
      EXPECT_EQ(trial["kind"], "trial");
      EXPECT_EQ(trial["variant"], r.variant);
      EXPECT_EQ(trial["point"], r.point);
      EXPECT_EQ(trial["trial"], ++trials[pair]);
      EXPECT_GT(trial["time_us"].get<double>(), 0.0);
      EXPECT_TRUE(trial["sm_clock_mhz"].is_null());
      EXPECT_EQ(trial["throttled"], false);
    }
  }
  return at;
}

const std::vector<Request> kRequests = {
    {"bt32", "b1", 3},   {"bt16-many", "b1", 2}, {"bt32", "b4.h3", 2}, {"nope", "b1", 1},
    {"bt32", "missing", 1}, {"bt32", "b1", 2},   {"bt16-many", "b4.h3", 1}, {"bt16-many", "b1", 1}};

std::string requests_text(const std::vector<Request>& requests) {
  std::string text;
  for (const Request& r : requests) text += measure(r.variant, r.point, r.trials);
  return text;
}

TEST(BenchProtocol, EveryLineIsValidAndInOrder) {
  const BenchRun run = run_bench(small_plan().dump() + "\n" + requests_text(kRequests));
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::vector<json> docs = validated(run);
  ASSERT_EQ(docs.size(), run.lines.size());
  ASSERT_GE(docs.size(), 4u);

  const json& header = docs[0];
  EXPECT_EQ(header["kind"], "header");
  EXPECT_EQ(header["backend"], "cpu");
  EXPECT_EQ(header["seed"], 5);
  EXPECT_EQ(header["device"]["multiprocessors"], 2);
  EXPECT_EQ(header["build"]["binary_hash"].get<std::string>().rfind("fnv1a64:", 0), 0u);
  EXPECT_FALSE(header["build"]["id"].get<std::string>().empty());

  EXPECT_EQ(docs[1]["kind"], "variant");
  EXPECT_EQ(docs[1]["variant"], "bt32");
  EXPECT_EQ(docs[2]["variant"], "bt16-many");
  EXPECT_EQ(docs[2]["params"]["num_warps"], 8);
  EXPECT_EQ(docs[2]["status"], "ok");
  EXPECT_EQ(docs[2]["ignored_params"], json({"num_warps", "num_stages"}));

  const std::size_t end = expect_answers(docs, 3, kRequests, {"bt32", "bt16-many"}, {"b1", "b4.h3"});
  ASSERT_EQ(end + 1, docs.size());
  const json& footer = docs.back();
  EXPECT_EQ(footer["kind"], "footer");
  EXPECT_EQ(footer["trials"], 3 + 2 + 2 + 2 + 1 + 1);
}

TEST(BenchProtocol, CheckLineReportsTheLaunchAndWorkingSet) {
  const BenchRun run = run_bench(small_plan().dump() + "\n" + measure("bt16-many", "b1", 1));
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::vector<json> docs = validated(run);
  ASSERT_GE(docs.size(), 4u);
  const json& check = docs[3];
  ASSERT_EQ(check["kind"], "check");
  // topk 200 in tiles of 16: 13 tiles; 64 CTAs wanted for 1 x 1 -> 13 splits.
  EXPECT_EQ(check["launch"]["tiles"], 13);
  EXPECT_EQ(check["launch"]["nsplit"], 13);
  EXPECT_EQ(check["launch"]["target_ctas"], 64);
  EXPECT_GT(check["working_set_bytes"].get<double>(), 2 * 200 * 1152.0);
  EXPECT_EQ(check["tolerance"]["max_rel_l2_o"], 0.01);
}

TEST(BenchProtocol, AnInfeasiblePairIsCheckedOnceThenSkipped) {
  json plan = small_plan();
  // 3 x 4096 regions of 4 x 2^20 rows: more cache rows than int32 indices reach.
  plan["points"].push_back({{"id", "huge"}, {"batch", 4096}, {"heads", 1}, {"topk", 1048576}});
  plan["timing"].erase("input_sets");
  const BenchRun run = run_bench(plan.dump() + "\n" + measure("bt32", "huge", 2) + measure("bt32", "huge", 1) +
                                 measure("bt32", "b1", 1));
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::vector<json> docs = validated(run);
  ASSERT_EQ(docs.size(), 9u);  // header, 2 variants, check, skipped, skipped, check, trial, footer
  EXPECT_EQ(docs[3]["kind"], "check");
  EXPECT_EQ(docs[3]["status"], "infeasible");
  EXPECT_NE(docs[3]["reason"].get<std::string>().find("int32"), std::string::npos) << docs[3].dump();
  EXPECT_EQ(docs[4]["kind"], "skipped");
  EXPECT_EQ(docs[4]["status"], "infeasible");
  EXPECT_EQ(docs[5]["kind"], "skipped");
  EXPECT_EQ(docs[6]["kind"], "check");
  EXPECT_EQ(docs[6]["status"], "ok");
  EXPECT_EQ(docs[7]["kind"], "trial");
  EXPECT_EQ(docs[8]["kind"], "footer");
}

TEST(BenchProtocol, AWrongKernelIsIncorrectAndNeverTimed) {
  const BenchRun run = run_bench(small_plan().dump() + "\n" + requests_text(kRequests), "wrong_result");
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::vector<json> docs = validated(run);
  for (const json& doc : docs) EXPECT_NE(doc["kind"], "trial") << doc.dump();
  const std::size_t end =
      expect_answers(docs, 3, kRequests, {"bt32", "bt16-many"}, {"b1", "b4.h3"}, {"bt32", "bt16-many"});
  ASSERT_EQ(end + 1, docs.size());
  EXPECT_EQ(docs.back()["trials"], 0);
}

TEST(BenchProtocol, ABadPlanGetsAnErrorNamingTheField) {
  json plan = small_plan();
  plan["points"].push_back({{"id", "b0"}, {"batch", 0}, {"heads", 16}, {"topk", 64}});
  BenchRun run = run_bench(plan.dump() + "\n" + measure("bt32", "b1", 1));
  EXPECT_EQ(run.exit_code, 2);
  std::vector<json> docs = validated(run);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["kind"], "error");
  EXPECT_EQ(docs[0]["where"], "points[2].batch");
  EXPECT_NE(docs[0]["message"].get<std::string>().find("points[2].batch"), std::string::npos);

  plan = small_plan();
  plan["variants"][1]["params"]["blockt"] = 3;
  run = run_bench(plan.dump() + "\n");
  EXPECT_EQ(run.exit_code, 2);
  docs = validated(run);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["where"], "variants[1].params.blockt");

  plan = small_plan();
  plan["variants"][1]["name"] = "bt32";
  run = run_bench(plan.dump() + "\n");
  EXPECT_EQ(run.exit_code, 2);
  docs = validated(run);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["where"], "variants[1].name");

  run = run_bench("{\"kind\": \"plan\", oops\n");
  EXPECT_EQ(run.exit_code, 2);
  docs = validated(run);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["kind"], "error");

  run = run_bench("");
  EXPECT_EQ(run.exit_code, 2);
  docs = validated(run);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["kind"], "error");
}

TEST(BenchProtocol, AMalformedRequestStopsTheBenchAfterWhatItMeasured) {
  const BenchRun run = run_bench(small_plan().dump() + "\n" + measure("bt32", "b1", 2) + "not json\n" +
                                 measure("bt32", "b1", 2));
  EXPECT_EQ(run.exit_code, 2);
  const std::vector<json> docs = validated(run);
  ASSERT_EQ(docs.size(), 7u);  // header, 2 variants, check, 2 trials, error
  EXPECT_EQ(docs[5]["trial"], 2);
  EXPECT_EQ(docs[6]["kind"], "error");
  EXPECT_EQ(docs[6]["where"], "line 3");

  const BenchRun zero = run_bench(small_plan().dump() + "\n" + measure("bt32", "b1", 0));
  EXPECT_EQ(zero.exit_code, 2);
  const std::vector<json> zero_docs = validated(zero);
  ASSERT_FALSE(zero_docs.empty());
  EXPECT_EQ(zero_docs.back()["where"], "line 2: trials");
}

TEST(BenchProtocol, CudaAskedOfABuildOrMachineWithoutItIsAnError) {
  json plan = small_plan();
  plan["backend"] = "cuda";
  const BenchRun run = run_bench(plan.dump() + "\n");
  if (run.exit_code == 0) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_NE(run.exit_code, 0);
  const std::vector<json> docs = validated(run);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["kind"], "error");
  EXPECT_EQ(docs[0]["where"], "backend");
  EXPECT_NE(docs[0]["message"].get<std::string>().find("CUDA"), std::string::npos);
}

TEST(BenchProtocol, CrashFaultKeepsTheTrialsWrittenBeforeIt) {
  const BenchRun run = run_bench(small_plan().dump() + "\n" + requests_text(kRequests), "crash_after_trials=4");
  EXPECT_GE(run.exit_code, 128);  // killed by SIGABRT
  const std::vector<json> docs = validated(run);
  int trials = 0;
  for (const json& doc : docs) trials += doc["kind"] == "trial";
  EXPECT_EQ(trials, 4);
  EXPECT_EQ(docs.back()["kind"], "trial");
}

TEST(BenchProtocol, GarbageFaultWritesOneLineThatIsNotJson) {
  const BenchRun run = run_bench(small_plan().dump() + "\n" + measure("bt32", "b1", 3), "garbage_after_trials=1");
  EXPECT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.lines.size(), 9u);  // header, 2 variants, check, trial, garbage, 2 trials, footer
  EXPECT_TRUE(json::parse(run.lines[5], nullptr, false).is_discarded());
  EXPECT_EQ(json::parse(run.lines[6])["trial"], 2);
  EXPECT_EQ(json::parse(run.lines[8])["kind"], "footer");

  const BenchRun bad = run_bench(small_plan().dump() + "\n", "explode_after_trials=1");
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(BenchProtocol, HangFaultStopsRespondingButStaysAlive) {
  int to_bench[2], from_bench[2];
  ASSERT_EQ(pipe(to_bench), 0);
  ASSERT_EQ(pipe(from_bench), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_bench[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_bench[1], 1);
  posix_spawn_file_actions_addclose(&actions, to_bench[1]);
  posix_spawn_file_actions_addclose(&actions, from_bench[0]);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  char arg0[] = MLA_BENCH_PATH;
  char* argv[] = {arg0, nullptr};
  char env0[] = "MLA_BENCH_FAULT=hang_after_trials=1";
  char* envp[] = {env0, nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, MLA_BENCH_PATH, &actions, nullptr, argv, envp), 0);
  posix_spawn_file_actions_destroy(&actions);
  // Whatever the assertions say, the hung bench is killed and reaped.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  close(to_bench[0]);
  close(from_bench[1]);

  // The runner keeps stdin open: the bench must hang, not reach EOF.
  const std::string input = small_plan().dump() + "\n" + measure("bt32", "b1", 3);
  ASSERT_EQ(write(to_bench[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  std::string out;
  const std::string trial_mark = "\"kind\":\"trial\"";
  // Reads until `ms` of silence, the end of output, or (when asked) the first trial line.
  auto read_for = [&](int ms, bool until_trial) {
    pollfd fd{from_bench[0], POLLIN, 0};
    while (!(until_trial && out.find(trial_mark) != std::string::npos) && poll(&fd, 1, ms) > 0) {
      char buffer[4096];
      const ssize_t n = read(from_bench[0], buffer, sizeof buffer);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  };
  read_for(10000, true);
  read_for(500, false);  // then half a second in which nothing more may come
  int trials = 0;
  for (std::size_t at = 0; (at = out.find(trial_mark, at)) != std::string::npos; ++at) ++trials;
  EXPECT_EQ(trials, 1) << out;
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), 0) << "the bench exited instead of hanging";
  close(to_bench[1]);
  close(from_bench[0]);
}

TEST(BenchProtocol, HelpAndVersion) {
  const BenchRun help = run_bench("", "", "--help");
  EXPECT_EQ(help.exit_code, 0);
  std::string text;
  for (const auto& line : help.lines) text += line + "\n";
  EXPECT_NE(text.find("MLA_BENCH_FAULT"), std::string::npos);
  EXPECT_NE(text.find("measure"), std::string::npos);
  EXPECT_NE(text.find("schema_version\":2"), std::string::npos);
  const BenchRun version = run_bench("", "", "--version");
  EXPECT_EQ(version.exit_code, 0);
  ASSERT_FALSE(version.lines.empty());
  EXPECT_EQ(version.lines[0].rfind("mla_bench 2 (protocol schema_version 1 and 2)", 0), 0u);
}

// The fp8 KV cache is a dtype of the sweep: spelt "fp8" (issue 14) or
// "fp8_e4m3" (the version 1 schema), checked against the reference on the
// dequantised cache at the usual tolerances, then timed.
TEST(BenchProtocol, Fp8PointsAreCheckedAndTimedUnderEitherName) {
  json plan = small_plan();
  plan["points"] = {{{"id", "fp8"}, {"batch", 3}, {"heads", 16}, {"topk", 200}, {"dtype", "fp8"}},
                    {{"id", "fp8_e4m3"}, {"batch", 3}, {"heads", 16}, {"topk", 200}, {"dtype", "fp8_e4m3"}},
                    {{"id", "bf16"}, {"batch", 3}, {"heads", 16}, {"topk", 200}, {"dtype", "bf16"}}};
  const BenchRun run = run_bench(plan.dump() + "\n" + measure("bt32", "fp8", 1) + measure("bt16-many", "fp8_e4m3", 1) +
                                 measure("bt32", "bf16", 1));
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::vector<json> docs = validated(run);
  ASSERT_EQ(docs.size(), 10u);  // header, 2 variants, 3 x (check, trial), footer
  std::vector<double> rel;
  for (std::size_t i : {3u, 5u, 7u}) {
    EXPECT_EQ(docs[i]["kind"], "check");
    EXPECT_EQ(docs[i]["status"], "ok") << docs[i].dump();
    rel.push_back(docs[i]["rel_l2_o"].get<double>());
    EXPECT_EQ(docs[i + 1]["kind"], "trial");
  }
  // A step moves 656-byte rows, not 1152-byte ones: fewer bytes for the same FLOPs.
  const double fp8_bytes = docs[4]["bytes_per_s"].get<double>() * docs[4]["time_us"].get<double>();
  const double bf16_bytes = docs[8]["bytes_per_s"].get<double>() * docs[8]["time_us"].get<double>();
  EXPECT_NEAR((bf16_bytes - fp8_bytes) * 1e-6, 3.0 * 200 * (1152 - 656), 1.0);

  plan["points"][0]["dtype"] = "fp16";
  const BenchRun bad = run_bench(plan.dump() + "\n");
  EXPECT_EQ(bad.exit_code, 2);
  const std::vector<json> bad_docs = validated(bad);
  ASSERT_EQ(bad_docs.size(), 1u);
  EXPECT_EQ(bad_docs[0]["where"], "points[0].dtype");
}

// ---- Protocol version 2 (schemas/bench/v2/) ----

json metric(const std::string& name, const std::string& unit, const std::string& direction) {
  return {{"name", name}, {"unit", unit}, {"direction", direction}};
}

json small_plan_v2() {
  return {{"kind", "plan"},
          {"schema_version", 2},
          {"backend", "cpu"},
          {"seed", 5},
          {"variants",
           {{{"name", "bt32"}, {"params", {{"block_t", 32}}}},
            {{"name", "bt16-many"}, {"params", {{"block_t", 16}, {"num_warps", 8}, {"target_ctas", 64}}}}}},
          {"points",
           {{{"id", "batch=1,heads=16"}, {"axes", {{"batch", 1}, {"heads", 16}, {"topk", 200}}}},
            {{"id", "b4 fp8"}, {"axes", {{"batch", 4}, {"heads", 3}, {"topk", 100}, {"dtype", "fp8"}}}}}},
          {"metrics",
           {metric("tokens_per_s", "tokens/s", "higher_is_better"), metric("time_us", "us", "lower_is_better"),
            metric("energy_j", "J", "lower_is_better")}},
          {"judged_metric", "tokens_per_s"},
          {"params", {{"input_sets", 2}, {"threads", 2}, {"max_rel_l2_o", 0.02}, {"masked_fraction", 0.2}}},
          {"timing", {{"min_trial_ms", 1}, {"warmup_ms", 1}}}};
}

TEST(BenchProtocolV2, EveryLineIsValidAndSaysWhatVersionTwoAsks) {
  const BenchRun run = run_bench(small_plan_v2().dump() + "\n" + measure("bt32", "batch=1,heads=16", 2) +
                                 measure("bt16-many", "b4 fp8", 1) + measure("nope", "b4 fp8", 1) +
                                 measure("bt32", "batch=1,heads=16", 1));
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::vector<json> docs = validated(run, 2);
  ASSERT_EQ(docs.size(), run.lines.size());
  ASSERT_EQ(docs.size(), 11u);  // header, 2 variants, check, 2 trials, check, trial, skipped, trial, footer

  const json& header = docs[0];
  EXPECT_EQ(header["schema_version"], 2);
  EXPECT_EQ(header["bench"], "mla_bench 2");
  EXPECT_EQ(header["backend"], "cpu");
  EXPECT_EQ(header["timer"], "wall_clock");
  EXPECT_FALSE(header["device"].contains("uuid"));  // a CPU has none
  EXPECT_EQ(header["seed"], 5);

  EXPECT_EQ(docs[1]["kind"], "variant");
  EXPECT_EQ(docs[1]["variant"], "bt32");
  EXPECT_EQ(docs[1]["params"]["block_t"], 32);
  EXPECT_TRUE(docs[1]["resources"].is_object());

  const json& check = docs[3];
  ASSERT_EQ(check["kind"], "check");
  EXPECT_EQ(check["point"], "batch=1,heads=16");
  EXPECT_EQ(check["status"], "ok");
  // The errors it measured and the bounds it applied, by the same names; the
  // tolerance came from the plan's params.
  for (const char* name : {"rel_l2_o", "max_abs_lse", "nonfinite", "masked_rows_wrong"}) {
    EXPECT_TRUE(check["errors"].contains(name)) << name;
    EXPECT_TRUE(check["tolerance"].contains(name)) << name;
  }
  EXPECT_LT(check["errors"]["rel_l2_o"].get<double>(), 0.01);
  EXPECT_EQ(check["tolerance"]["rel_l2_o"], 0.02);
  EXPECT_EQ(check["tolerance"]["max_abs_lse"], 0.001);
  EXPECT_EQ(check["detail"]["input_sets"], 2);
  EXPECT_GT(check["detail"]["launch"]["tiles"].get<int>(), 0);

  for (std::size_t i : {4u, 5u, 7u, 9u}) {
    const json& trial = docs[i];
    ASSERT_EQ(trial["kind"], "trial") << trial.dump();
    // The declared metrics mla_bench computes, the judged one always;
    // energy_j is declared but not measured, bytes_per_s measured but not
    // declared: neither appears.
    ASSERT_EQ(trial["metrics"].size(), 2u) << trial.dump();
    EXPECT_GT(trial["metrics"]["tokens_per_s"].get<double>(), 0.0);
    EXPECT_GT(trial["metrics"]["time_us"].get<double>(), 0.0);
    EXPECT_FALSE(trial.contains("time_us"));
    EXPECT_TRUE(trial["clock_mhz"].is_null());
    EXPECT_EQ(trial["throttled"], false);
  }
  EXPECT_EQ(docs[4]["trial"], 1);
  EXPECT_EQ(docs[5]["trial"], 2);
  EXPECT_EQ(docs[9]["trial"], 3);
  // tokens/s is batch over the step time.
  EXPECT_NEAR(docs[4]["metrics"]["tokens_per_s"].get<double>() * docs[4]["metrics"]["time_us"].get<double>(), 1e6, 1.0);

  EXPECT_EQ(docs[6]["kind"], "check");
  EXPECT_EQ(docs[6]["point"], "b4 fp8");
  EXPECT_EQ(docs[6]["status"], "ok") << docs[6].dump();
  EXPECT_EQ(docs[8]["kind"], "skipped");
  EXPECT_EQ(docs[8]["status"], "unknown");
  EXPECT_EQ(docs.back()["kind"], "footer");
  EXPECT_EQ(docs.back()["trials"], 4);
}

TEST(BenchProtocolV2, AnIncorrectKernelReportsItsErrorsByName) {
  const BenchRun run = run_bench(small_plan_v2().dump() + "\n" + measure("bt32", "batch=1,heads=16", 1),
                                 "wrong_result");
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const std::vector<json> docs = validated(run, 2);
  ASSERT_EQ(docs.size(), 6u);  // header, 2 variants, check, skipped, footer
  EXPECT_EQ(docs[3]["status"], "incorrect");
  EXPECT_GT(docs[3]["errors"]["rel_l2_o"].get<double>(), docs[3]["tolerance"]["rel_l2_o"].get<double>());
  EXPECT_FALSE(docs[3]["reason"].get<std::string>().empty());
  EXPECT_EQ(docs[4]["kind"], "skipped");
  EXPECT_EQ(docs[4]["status"], "incorrect");
}

// One bad field of a version 2 plan: an error line naming it, exit 2.
void expect_plan_error(const json& plan, const std::string& where) {
  SCOPED_TRACE(where);
  const BenchRun run = run_bench(plan.dump() + "\n");
  EXPECT_EQ(run.exit_code, 2);
  const std::vector<json> docs = validated(run, 2);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["kind"], "error");
  EXPECT_EQ(docs[0]["where"], where) << docs[0].dump();
  EXPECT_NE(docs[0]["message"].get<std::string>().find(where), std::string::npos);
}

TEST(BenchProtocolV2, ABadPlanGetsAnErrorNamingTheField) {
  json plan = small_plan_v2();
  plan["judged_metric"] = "flops_per_s";  // measured, but not declared
  expect_plan_error(plan, "judged_metric");
  plan = small_plan_v2();
  plan["judged_metric"] = "energy_j";  // declared, but not something mla_bench measures
  expect_plan_error(plan, "judged_metric");
  plan = small_plan_v2();
  plan["metrics"][1]["direction"] = "higher_is_better";  // time_us
  expect_plan_error(plan, "metrics[1].direction");
  plan = small_plan_v2();
  plan["metrics"].push_back(metric("time_us", "us", "lower_is_better"));
  expect_plan_error(plan, "metrics[3].name");
  plan = small_plan_v2();
  plan.erase("metrics");
  expect_plan_error(plan, "metrics");
  plan = small_plan_v2();
  plan["points"][1]["axes"]["seq_len"] = 4;
  expect_plan_error(plan, "points[1].axes.seq_len");
  plan = small_plan_v2();
  plan["points"][0]["axes"].erase("batch");
  expect_plan_error(plan, "points[0].axes.batch");
  plan = small_plan_v2();
  plan["points"][0]["axes"]["dtype"] = "int4";
  expect_plan_error(plan, "points[0].axes.dtype");
  plan = small_plan_v2();
  plan["points"][0]["id"] = "tab\there";
  expect_plan_error(plan, "points[0].id");
  plan = small_plan_v2();
  plan["params"]["max_rel_l2"] = 0.1;  // a typo of max_rel_l2_o
  expect_plan_error(plan, "params.max_rel_l2");
  plan = small_plan_v2();
  plan["params"]["max_abs_lse"] = 0;
  expect_plan_error(plan, "params.max_abs_lse");
  plan = small_plan_v2();
  plan["params"]["context_rows"] = 150;  // < topk 200 of point 0
  expect_plan_error(plan, "points[0].axes.topk");
  plan = small_plan_v2();
  plan["timing"]["threads"] = 2;  // a bench setting: it belongs in params
  expect_plan_error(plan, "timing.threads");
  plan = small_plan_v2();
  plan["check"] = json::object();  // version 1's block
  expect_plan_error(plan, "check");
  plan = small_plan_v2();
  plan["schema_version"] = 3;
  expect_plan_error(plan, "schema_version");
}

// The points of a version 2 plan are measured like version 1's: the same
// kernel on the same seed gives the same output, whichever version asked.
TEST(BenchProtocolV2, VersionOneAndTwoCheckTheSameOutput) {
  json v1 = small_plan();
  v1["points"] = {{{"id", "b4"}, {"batch", 4}, {"heads", 3}, {"topk", 100}, {"dtype", "fp8"}}};
  json v2 = small_plan_v2();
  v2["points"] = {{{"id", "b4"}, {"axes", {{"batch", 4}, {"heads", 3}, {"topk", 100}, {"dtype", "fp8"}}}}};
  v2["params"]["masked_fraction"] = 0.1;
  const BenchRun one = run_bench(v1.dump() + "\n" + measure("bt32", "b4", 1));
  const BenchRun two = run_bench(v2.dump() + "\n" + measure("bt32", "b4", 1));
  ASSERT_EQ(one.exit_code, 0) << one.stderr_text;
  ASSERT_EQ(two.exit_code, 0) << two.stderr_text;
  const std::vector<json> d1 = validated(one, 1), d2 = validated(two, 2);
  ASSERT_GE(d1.size(), 4u);
  ASSERT_GE(d2.size(), 4u);
  EXPECT_EQ(d1[3]["rel_l2_o"], d2[3]["errors"]["rel_l2_o"]);
  EXPECT_EQ(d1[3]["max_abs_lse"], d2[3]["errors"]["max_abs_lse"]);
  EXPECT_EQ(d1[3]["launch"], d2[3]["detail"]["launch"]);
}

}  // namespace
