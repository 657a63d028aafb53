// A bench program for the runner's tests: speaks the protocol of
// schemas/bench/ with made-up but valid numbers, and misbehaves on request so
// every failure the runner must survive can be produced in milliseconds.
//
// FAKE_BENCH selects the behaviour (default "ok"):
//   ok                     a well-behaved bench
//   crash_after=N          abort() after N trial lines
//   hang_after=N           stop answering after N trial lines
//   garbage_after=N        write a line that is not JSON after N trial lines
//   bad_trial_number       number the second trial 3
//   error_line             answer the plan with an error line and exit 2
//   exit_nonzero           behave, then exit 3 after the footer
//   incorrect=NAME         variant NAME fails its check at every point
//   infeasible=NAME        variant NAME is infeasible
//   undeclared_metric      (version 2) the first trial carries a metric the plan does not declare
//   expect_adapter=KIND    started as an adapter: argv must be "adapter --kind KIND" and
//                          PERFWATCH_ADAPTER_BENCH the bench object naming that adapter
//   no_judged_metric       (version 2) the first trial lacks the plan's judged metric
// It answers in the plan's protocol version: 1 (the MLA decode step's fields)
// or 2 (axes, and the plan's declared metrics: time_us, tokens_per_s, and any
// other as 1e9).
// FAKE_BENCH_LOG, when set, is a file to which each measure request's variant
// is appended, one per line (to check the runner's interleaving).
// FAKE_BENCH_SLOW=NAME:F makes variant NAME's times F times longer.
// FAKE_BENCH_TRIAL_MS=N makes each trial take N ms of wall time (a bench of
// a fixed run time, for the scheduling benchmark).
// FAKE_BENCH_RUN_NOISE=S multiplies every time of the process by one factor
// exp(S * z), z standard normal from the process id and the clock: noise from
// run to run, as a GPU's clocks and placement give.
// FAKE_BENCH_SLOW_GPU=UUID:F makes every time F times longer when
// CUDA_VISIBLE_DEVICES is UUID (a slow card among fake GPUs).
// FAKE_BENCH_SPAN_LOG, when set, is a file to which the process appends
// "<pid> <CUDA_VISIBLE_DEVICES> <start ns> <end ns>" (CLOCK_MONOTONIC, one
// clock for every process) when it exits after its footer: which ran when.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <random>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

int after(const std::string& mode, const std::string& key) {
  if (mode.rfind(key + "=", 0) != 0) return -1;
  return std::stoi(mode.substr(key.size() + 1));
}

void emit(const json& line) { std::cout << line.dump() << '\n' << std::flush; }

}  // namespace

int main(int argc, char** argv) {
  const auto started = std::chrono::steady_clock::now().time_since_epoch().count();
  std::string mode = env("FAKE_BENCH", "ok");
  std::string line;
  if (!std::getline(std::cin, line)) return 2;
  json plan = json::parse(line);
  if (mode.rfind("expect_adapter=", 0) == 0) {
    const std::string kind = mode.substr(15);
    json bench = json::parse(env("PERFWATCH_ADAPTER_BENCH", "null"), nullptr, false);
    bool args_ok = argc == 4 && std::string(argv[1]) == "adapter" && std::string(argv[2]) == "--kind" && argv[3] == kind;
    bool bench_ok = bench.is_object() && bench.value("adapter", "") == kind && bench.contains("command");
    if (!args_ok || !bench_ok) {
      emit({{"kind", "error"}, {"where", "adapter"}, {"message", "not started as the adapter contract says"}});
      return 2;
    }
  }
  if (mode == "error_line") {
    emit({{"kind", "error"}, {"where", "points[0].batch"}, {"message", "made-up failure for a test"}});
    return 2;
  }
  std::string incorrect = mode.rfind("incorrect=", 0) == 0 ? mode.substr(10) : "";
  std::string infeasible = mode.rfind("infeasible=", 0) == 0 ? mode.substr(11) : "";
  std::string slow_name;
  double slow_factor = 1;
  if (auto spec = env("FAKE_BENCH_SLOW"); !spec.empty()) {
    slow_name = spec.substr(0, spec.find(':'));
    slow_factor = std::stod(spec.substr(spec.find(':') + 1));
  }

  const int version = plan["schema_version"].get<int>();
  json header = {{"kind", "header"}, {"schema_version", version}, {"bench", "fake_bench 1"}, {"backend", "cpu"}, {"seed", 7},
                 {"device", {{"name", "fake cpu"}, {"multiprocessors", 1}}}, {"build", {{"id", "test"}, {"compiler", "none"}}}};
  if (version == 2) header["timer"] = "wall_clock";
  emit(header);
  for (const auto& v : plan["variants"]) {
    json out = {{"kind", "variant"}, {"variant", v["name"]}, {"params", v["params"]}, {"status", "ok"}};
    if (v["name"] == infeasible) {
      out["status"] = "infeasible";
      out["reason"] = "made up: needs 300 KB of shared memory";
    }
    emit(out);
  }
  std::map<std::string, json> points;
  for (const auto& p : plan["points"]) points[p["id"]] = p;

  std::ofstream log;
  if (auto path = env("FAKE_BENCH_LOG"); !path.empty()) log.open(path, std::ios::app);
  std::map<std::string, int> trial_no;
  std::map<std::string, bool> checked;
  int total = 0;
  unsigned long long noise = 12345;
  double process_factor = 1.0;
  if (auto s = env("FAKE_BENCH_RUN_NOISE"); !s.empty()) {
    std::mt19937_64 rng(std::random_device{}() ^ static_cast<unsigned long long>(::getpid()) ^
                        static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()));
    process_factor *= std::exp(std::stod(s) * std::normal_distribution<double>(0, 1)(rng));
  }
  if (auto spec = env("FAKE_BENCH_SLOW_GPU"); !spec.empty() &&
                                             env("CUDA_VISIBLE_DEVICES") == spec.substr(0, spec.find(':'))) {
    process_factor *= std::stod(spec.substr(spec.find(':') + 1));
  }
  const int trial_ms = std::atoi(env("FAKE_BENCH_TRIAL_MS", "0").c_str());
  while (std::getline(std::cin, line)) {
    json req = json::parse(line);
    std::string variant = req["variant"], point = req["point"];
    if (log) log << variant << '\n' << std::flush;
    std::string key = variant + "@" + point;
    if (!checked[key]) {
      checked[key] = true;
      json check = {{"kind", "check"}, {"variant", variant}, {"point", point}, {"status", "ok"}};
      const double error = variant == incorrect ? 0.5 : 0.002;
      if (version == 2) check["errors"] = {{"rel_l2", error}};
      else check["rel_l2_o"] = error;
      if (variant == incorrect) {
        check["status"] = "incorrect";
        check["reason"] = "rel_l2_o 0.5 > 0.01";
      }
      emit(check);
    }
    if (variant == incorrect || !points.count(point)) {
      emit({{"kind", "skipped"}, {"variant", variant}, {"point", point}, {"status", variant == incorrect ? "incorrect" : "unknown"},
            {"reason", "not timed"}});
      continue;
    }
    for (int t = 0; t < req["trials"].get<int>(); ++t) {
      if (total == after(mode, "crash_after")) std::abort();
      if (total == after(mode, "hang_after")) std::this_thread::sleep_for(std::chrono::hours(1));
      if (total == after(mode, "garbage_after")) std::cout << "Segmentation fault? no, just garbage\n" << std::flush;
      int n = ++trial_no[key];
      if (mode == "bad_trial_number" && n == 2) n = 3;
      noise = noise * 6364136223846793005ull + 1442695040888963407ull;
      double jitter = 1.0 + 0.002 * (static_cast<double>(noise >> 40) / (1ull << 24) - 0.5);
      const json& axes = version == 2 ? points[point]["axes"] : points[point];
      double batch = axes.contains("batch") ? axes["batch"].get<double>() : 1.0;
      double time_us = (10.0 + batch) * jitter * (variant == slow_name ? slow_factor : 1.0) * process_factor;
      if (trial_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(trial_ms));
      if (version == 2) {
        json metrics = json::object();
        for (const auto& m : plan["metrics"]) {
          std::string name = m["name"];
          metrics[name] = name == "time_us" ? time_us : name == "tokens_per_s" ? batch / time_us * 1e6 : 1e9;
        }
        if (total == 0 && mode == "undeclared_metric") metrics["watts"] = 300;
        if (total == 0 && mode == "no_judged_metric") metrics.erase(plan["judged_metric"].get<std::string>());
        if (metrics.empty()) metrics["watts"] = 300;
        emit({{"kind", "trial"}, {"variant", variant}, {"point", point}, {"trial", n}, {"metrics", metrics}, {"steps", 100},
              {"clock_mhz", nullptr}, {"throttled", false}});
      } else {
        emit({{"kind", "trial"}, {"variant", variant}, {"point", point}, {"trial", n}, {"time_us", time_us}, {"steps", 100},
              {"tokens_per_s", batch / time_us * 1e6}, {"bytes_per_s", 1e9}, {"flops_per_s", 1e9}, {"sm_clock_mhz", nullptr},
              {"throttled", false}});
      }
      ++total;
    }
  }
  emit({{"kind", "footer"}, {"trials", total}, {"wall_s", 0.01}});
  if (auto log = env("FAKE_BENCH_SPAN_LOG"); !log.empty()) {
    const auto end = std::chrono::steady_clock::now().time_since_epoch().count();
    std::ofstream(log, std::ios::app) << ::getpid() << ' ' << env("CUDA_VISIBLE_DEVICES", "-") << ' ' << started
                                      << ' ' << end << '\n';
  }
  return mode == "exit_nonzero" ? 3 : 0;
}
