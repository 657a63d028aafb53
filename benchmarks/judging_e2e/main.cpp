// judging_e2e: how well the real `perfwatch watch` judges, end to end. For
// each scenario (run-to-run noise x pinned baseline or not) it generates
// histories with known truth (history.h), writes each as a git repository
// with a synthetic bench that reports that truth through noise
// (history_repo.h, synthetic_bench.cpp), runs `perfwatch watch --once` over
// it with a fresh database, reads what perfwatch recorded (observed.h) and
// scores it (scorer.h): recall of 5% steps at the right commit, false flags
// per 1,000 unchanged comparisons, the drift and the blip, duplicate and stale
// flags, bench processes per commit against the budget.
//
// perfwatch is reached only through its command line and its database, so
// any build of it can be pointed at with --perfwatch.
//
// usage: judging_e2e [--perfwatch PATH] [--bench PATH] [--histories N] [--commits N]
//                    [--scenarios A,B,...] [--seed N] [--jobs N] [--keep DIR]
//                    [--quick] [--check] [--label TEXT] [--markdown FILE] [--json FILE]
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "benchmarks/judging_e2e/history.h"
#include "benchmarks/judging_e2e/history_repo.h"
#include "benchmarks/judging_e2e/observed.h"
#include "benchmarks/judging_e2e/report.h"
#include "benchmarks/judging_e2e/scenario.h"
#include "benchmarks/judging_e2e/scorer.h"
#include "runner/process.h"
#include "schemas/manifest_defaults.h"

namespace fs = std::filesystem;
using namespace judging_e2e;

namespace {

struct Options {
  std::string perfwatch = JUDGING_E2E_PERFWATCH;
  std::string bench = JUDGING_E2E_BENCH;
  int histories = 5;
  int commits = 60;
  int max_per_commit = perfwatch::schemas::kDefaultMaxRunsPerCommit;  // the manifest's runs.max_per_commit: the budget judged within
  std::string scenarios;   // empty: all
  unsigned long long seed = 1;
  int jobs = 1;
  std::string keep;        // keep repos and databases here
  bool quick = false;
  bool check = false;
  std::string label, markdown, json;
  std::string render;      // print a --json file's figures again instead of measuring
};

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Task {
  size_t scenario;
  int index;       // the history's number within its scenario
};

struct Outcome {
  Score score;
  std::vector<std::string> problems;  // an empty list: the counts hold together
};

// One history: generate, write, watch, read, score.
Outcome run_history(const Options& o, const Scenario& sc, int index, const fs::path& work) {
  Outcome out;
  out.score.histories = 1;
  // The same truth and bench draws with and without a pin: the two scenarios
  // of one noise level judge the same histories.
  const std::uint64_t seed = mix(o.seed * 1000003 + static_cast<std::uint64_t>(sc.run_noise * 1e6) * 101 + index);
  HistoryShape shape;
  shape.commits = o.commits;
  const History history = generate_history(shape, sc.run_noise, 0.003, seed);

  const fs::path dir = work / (sc.name + "-" + std::to_string(index));
  fs::remove_all(dir);
  RepoOptions ro;
  ro.dir = dir / "repo";
  ro.bench = fs::absolute(o.bench);
  ro.run_log = fs::absolute(dir / "bench_runs.log");
  ro.bench_seed = mix(seed);
  ro.pinned = sc.pinned;
  ro.max_per_commit = o.max_per_commit;
  ro.name = "judging_e2e " + sc.name + " #" + std::to_string(index);
  auto repo = write_repo(history, ro);
  if (!repo) {
    out.problems.push_back(repo.error().to_string());
    out.score.failed_watches = 1;
    return out;
  }

  perfwatch::runner::ProcessSpec spec;
  spec.argv = {fs::absolute(o.perfwatch).string(), "--db", (dir / "perfwatch.db").string(), "watch", "--repo",
               repo->dir.string(), "--once", "--since", repo->shas.front()};
  spec.workdir = dir;
  spec.timeout_s = 3600;
  const auto watched = perfwatch::runner::run_logged(spec, dir / "watch.log");
  out.score.wall_s = out.score.wall_s_max = watched.wall_s;
  if (!watched.ok()) {
    out.score.failed_watches = 1;
    out.problems.push_back("perfwatch watch " + watched.describe() + " (log: " + (dir / "watch.log").string() + ")");
  }
  auto observed = read_database(dir / "perfwatch.db");
  if (!observed) {
    out.problems.push_back(observed.error().to_string());
    return out;
  }
  Score s = score_history(history, repo->shas, *observed, repo->manifest["runs"]["max_per_commit"].get<int>());
  s.failed_watches = out.score.failed_watches;
  s.wall_s = s.wall_s_max = watched.wall_s;
  out.score = s;
  for (auto& p : consistency_problems(history, repo->shas, *observed)) out.problems.push_back(std::move(p));
  if (o.keep.empty()) fs::remove_all(dir);
  return out;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

std::string machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string model = "unknown CPU";
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + ", " + std::to_string(std::thread::hardware_concurrency()) + " cores";
}

std::string perfwatch_version(const std::string& perfwatch) {
  perfwatch::runner::ProcessSpec spec;
  spec.argv = {perfwatch, "--version"};
  spec.timeout_s = 30;
  auto out = perfwatch::runner::run_captured(spec);
  std::string v = out.out;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return out.result.ok() ? v : "--version " + out.result.describe();
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) std::fprintf(stderr, "judging_e2e: %s: cannot write\n", path.c_str());
  return static_cast<bool>(out);
}

// --render: the table and the markdown of an earlier run, from its JSON, so
// that a change of wording needs no new measurement.
int render(const Options& o) {
  std::ifstream in(o.render);
  auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || doc.value("schema", "") != "judging_e2e 1") {
    std::fprintf(stderr, "judging_e2e: --render %s: not a judging_e2e JSON file\n", o.render.c_str());
    return 2;
  }
  try {
    std::vector<ScenarioResult> results;
    for (const auto& s : doc.at("scenarios"))
      results.push_back({{s.at("scenario"), s.at("run_noise"), s.at("pinned")}, Score::from_json(s)});
    RunInfo info;
    info.command = doc.at("command");
    info.label = o.label.empty() ? doc.at("label").get<std::string>() : o.label;
    info.date = doc.at("date");
    info.machine = doc.at("machine");
    info.perfwatch = doc.at("perfwatch");
    info.perfwatch_version = doc.at("perfwatch_version");
    info.commits = doc.at("commits");
    info.histories = doc.at("histories");
    info.jobs = doc.at("jobs");
    info.seed = doc.at("seed");
    info.wall_s = doc.at("wall_s");
    std::fputs(text_table(results).c_str(), stdout);
    if (!o.markdown.empty() && !write_file(o.markdown, markdown(results, info))) return 1;
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "judging_e2e: --render %s: %s\n", o.render.c_str(), e.what());
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"judging_e2e: the real `perfwatch watch` over generated histories with known truth, scored"};
  app.add_option("--perfwatch", o.perfwatch, "The perfwatch binary to test")->capture_default_str();
  app.add_option("--bench", o.bench, "The synthetic bench (judging_e2e_bench)")->capture_default_str();
  app.add_option("--histories", o.histories, "Histories per scenario")->capture_default_str()->check(CLI::Range(1, 10000));
  app.add_option("--commits", o.commits, "Commits per history")->capture_default_str()->check(CLI::Range(10, 100000));
  app.add_option("--max-per-commit", o.max_per_commit, "The manifest's runs.max_per_commit (the budget)")
      ->capture_default_str()
      ->check(CLI::Range(3, 1000));
  app.add_option("--scenarios", o.scenarios, "Comma-separated subset of: noise0.5, noise2, noise3, noise6, each also +pin (default: all)");
  app.add_option("--seed", o.seed, "Seed of the histories and the bench's draws")->capture_default_str();
  app.add_option("--jobs", o.jobs, "Histories watched at once (separate perfwatch processes)")->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--keep", o.keep, "Keep every history's repo, database and watch log under this folder");
  app.add_flag("--quick", o.quick, "A smoke check of a few minutes: 1 history of 40 commits per scenario");
  app.add_flag("--check", o.check, "Exit 1 unless every history ran end to end and its counts hold together (not the figures)");
  app.add_option("--label", o.label, "A line saying what was measured, for the markdown");
  app.add_option("--markdown", o.markdown, "Write the figures as markdown here");
  app.add_option("--json", o.json, "Write every count as JSON here");
  app.add_option("--render", o.render, "Measure nothing: print the figures of a --json file again (and --markdown them)")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  if (!o.render.empty()) return render(o);
  if (o.quick) {
    o.histories = 1;
    o.commits = 40;
  }
  if (!fs::exists(o.perfwatch) || !fs::exists(o.bench)) {
    std::fprintf(stderr, "judging_e2e: --perfwatch %s / --bench %s: not found\n", o.perfwatch.c_str(), o.bench.c_str());
    return 2;
  }

  std::vector<Scenario> scenarios;
  if (o.scenarios.empty()) {
    scenarios = all_scenarios();
  } else {
    std::istringstream names(o.scenarios);
    for (std::string name; std::getline(names, name, ',');) {
      bool found = false;
      for (const auto& sc : all_scenarios())
        if (sc.name == name) scenarios.push_back(sc), found = true;
      if (!found) {
        std::fprintf(stderr, "judging_e2e: --scenarios: unknown scenario '%s'\n", name.c_str());
        return 2;
      }
    }
  }

  fs::path work;
  if (!o.keep.empty()) {
    work = fs::absolute(o.keep);
    fs::create_directories(work);
  } else {
    work = fs::temp_directory_path() / ("judging_e2e-" + std::to_string(getpid()));
    fs::create_directories(work);
  }

  std::vector<Task> tasks;
  for (size_t s = 0; s < scenarios.size(); ++s)
    for (int h = 0; h < o.histories; ++h) tasks.push_back({s, h});
  std::vector<Outcome> outcomes(tasks.size());
  std::atomic<size_t> next{0};
  std::mutex print;
  const auto started = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> workers;
    for (int j = 0; j < std::min<int>(o.jobs, static_cast<int>(tasks.size())); ++j)
      workers.emplace_back([&] {
        for (size_t t; (t = next++) < tasks.size();) {
          const auto& sc = scenarios[tasks[t].scenario];
          outcomes[t] = run_history(o, sc, tasks[t].index, work);
          const Score& s = outcomes[t].score;
          std::lock_guard lock(print);
          std::fprintf(stderr, "judging_e2e: %s #%d: %d/%d steps, %d false flags / %d comparisons, runs max %d, %.1f s%s\n",
                       sc.name.c_str(), tasks[t].index, s.steps_found, s.steps, s.false_flags, s.unchanged_comparisons,
                       s.runs_max, s.wall_s, outcomes[t].problems.empty() ? "" : " -- PROBLEMS:");
          for (const auto& p : outcomes[t].problems) std::fprintf(stderr, "  %s\n", p.c_str());
        }
      });
  }
  if (o.keep.empty()) fs::remove_all(work);

  std::vector<ScenarioResult> results;
  for (const auto& sc : scenarios) results.push_back({sc, {}});
  int problems = 0;
  for (size_t t = 0; t < tasks.size(); ++t) {
    results[tasks[t].scenario].total.add(outcomes[t].score);
    problems += static_cast<int>(outcomes[t].problems.size());
  }

  RunInfo info;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@") ==
                       std::string::npos;
    info.command += (i ? " " : "") + (plain ? arg : shell_quote(arg));
  }
  info.label = o.label;
  info.date = utc_now();
  info.machine = machine();
  info.perfwatch = fs::absolute(o.perfwatch).string();
  info.perfwatch_version = perfwatch_version(info.perfwatch);
  info.commits = o.commits;
  info.histories = o.histories;
  info.jobs = o.jobs;
  info.seed = o.seed;
  info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::fputs(text_table(results).c_str(), stdout);
  bool ok = true;
  if (!o.markdown.empty()) ok &= write_file(o.markdown, markdown(results, info));
  if (!o.json.empty()) ok &= write_file(o.json, to_json(results, info).dump(2) + "\n");
  if (!o.keep.empty()) std::printf("repos, databases and watch logs kept in %s\n", work.c_str());
  if (o.check && problems > 0) {
    std::fprintf(stderr, "judging_e2e: --check: %d problems (above)\n", problems);
    return 1;
  }
  return ok ? 0 : 1;
}
