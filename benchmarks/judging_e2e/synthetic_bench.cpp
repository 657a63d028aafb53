// judging_e2e_bench: a bench program (protocol version 1, schemas/bench/)
// whose true speed is known. It reads truth.json of the commit it runs in --
// per variant x batch the true time of one step -- and answers each measure
// request with trials of
//     time_us = true time x run factor x trial factor,
// where the run factor is drawn once per process and cell (lognormal, sigma =
// the file's run_noise: the process-to-process noise perfwatch's bands
// measure) and the trial factor once per trial (sigma = trial_noise). It does
// no work: a run of a few cells takes milliseconds.
//
// usage: judging_e2e_bench TRUTH_JSON [RUN_LOG]
//   RUN_LOG, with $JUDGING_E2E_SEED set: a file shared by the runs of one
//   history; each process appends a line under an exclusive lock and draws
//   from seed x (lines before its own), so a history's runs are reproducible
//   while perfwatch runs them one at a time. Without them the seed comes
//   from the clock and the pid.
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

void emit(const json& line) { std::cout << line.dump() << '\n' << std::flush; }

[[noreturn]] void die(const std::string& where, const std::string& message) {
  emit({{"kind", "error"}, {"where", where}, {"message", message}});
  std::exit(2);
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t hash_text(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;  // fnv1a64
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// This process's seed: the history's seed and this run's place among its
// runs, or the clock and the pid.
std::uint64_t run_seed(const char* run_log, int commit) {
  const char* seed = std::getenv("JUDGING_E2E_SEED");
  if (run_log == nullptr || seed == nullptr) {
    auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    return mix(static_cast<std::uint64_t>(now) ^ (static_cast<std::uint64_t>(getpid()) << 32));
  }
  std::FILE* f = std::fopen(run_log, "a+");
  if (f == nullptr) die("argv[2]", std::string("cannot open the run log ") + run_log);
  flock(fileno(f), LOCK_EX);
  std::rewind(f);
  std::uint64_t before = 0;
  for (int ch; (ch = std::fgetc(f)) != EOF;)
    if (ch == '\n') ++before;
  std::fprintf(f, "run %llu commit %d pid %d\n", static_cast<unsigned long long>(before), commit, getpid());
  std::fflush(f);
  flock(fileno(f), LOCK_UN);
  std::fclose(f);
  return mix(std::strtoull(seed, nullptr, 10) ^ mix(before + 1));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("argv", "usage: judging_e2e_bench TRUTH_JSON [RUN_LOG]");
  json truth;
  {
    std::ifstream in(argv[1]);
    if (!in) die("argv[1]", std::string("cannot read ") + argv[1]);
    truth = json::parse(in, nullptr, false);
    if (truth.is_discarded() || !truth.contains("cells")) die(argv[1], "not a judging_e2e truth file");
  }
  const double run_noise = truth.value("run_noise", 0.0);
  const double trial_noise = truth.value("trial_noise", 0.0);
  std::map<std::pair<std::string, int>, double> true_us;
  for (const auto& c : truth["cells"]) true_us[{c["variant"].get<std::string>(), c["batch"].get<int>()}] = c["time_us"];

  const auto started = std::chrono::steady_clock::now();
  const std::uint64_t seed = run_seed(argc > 2 ? argv[2] : nullptr, truth.value("commit", -1));

  std::string line;
  if (!std::getline(std::cin, line)) die("stdin", "no plan");
  json plan = json::parse(line, nullptr, false);
  if (plan.is_discarded() || !plan.contains("variants") || !plan.contains("points")) die("plan", "not a plan");

  // The seed is reported within the protocol's range (a JSON integer >= 0
  // that any reader takes): 53 bits.
  emit({{"kind", "header"}, {"schema_version", 1}, {"bench", "judging_e2e_bench 1"}, {"backend", "cpu"},
        {"seed", seed >> 11}, {"device", {{"name", "synthetic (no work)"}, {"multiprocessors", 1}}},
        {"build", {{"id", "judging_e2e"}, {"compiler", "none"}}}});
  for (const auto& v : plan["variants"])
    emit({{"kind", "variant"}, {"variant", v["name"]}, {"params", v["params"]}, {"status", "ok"}});
  std::map<std::string, int> batch_of;
  for (const auto& p : plan["points"]) batch_of[p["id"]] = p["batch"];

  // Per cell: its run factor (drawn from the cell's own stream, so that the
  // order of requests does not change it), its trial stream, its trial count.
  struct CellState {
    double true_us = 0, run_factor = 1;
    std::mt19937_64 trials;
    int n = 0;
  };
  std::map<std::string, CellState> cells;
  std::normal_distribution<double> normal(0.0, 1.0);
  long total = 0;
  while (std::getline(std::cin, line)) {
    json req = json::parse(line, nullptr, false);
    if (req.is_discarded() || req.value("kind", "") != "measure") die("stdin", "not a measure request: " + line);
    const std::string variant = req["variant"], point = req["point"];
    const std::string key = variant + "@" + point;
    auto it = cells.find(key);
    if (it == cells.end()) {
      auto b = batch_of.find(point);
      auto t = b == batch_of.end() ? true_us.end() : true_us.find({variant, b->second});
      if (t == true_us.end()) {
        emit({{"kind", "skipped"}, {"variant", variant}, {"point", point}, {"status", "unknown"},
              {"reason", std::string("no true value for this cell in ") + argv[1]}});
        continue;
      }
      CellState s;
      s.true_us = t->second;
      s.trials.seed(mix(seed ^ hash_text(key)));
      s.run_factor = std::exp(run_noise * normal(s.trials));
      it = cells.emplace(key, std::move(s)).first;
      emit({{"kind", "check"}, {"variant", variant}, {"point", point}, {"status", "ok"}, {"rel_l2_o", 0.0}});
    }
    auto& s = it->second;
    const int batch = batch_of[point];
    for (int t = 0; t < req["trials"].get<int>(); ++t) {
      const double time_us = s.true_us * s.run_factor * std::exp(trial_noise * normal(s.trials));
      emit({{"kind", "trial"}, {"variant", variant}, {"point", point}, {"trial", ++s.n}, {"time_us", time_us},
            {"steps", 1}, {"tokens_per_s", batch / time_us * 1e6}, {"bytes_per_s", 1e9 / time_us},
            {"flops_per_s", 1e12 / time_us}, {"sm_clock_mhz", nullptr}, {"throttled", false}});
      ++total;
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  emit({{"kind", "footer"}, {"trials", total}, {"wall_s", wall_s}});
  return 0;
}
