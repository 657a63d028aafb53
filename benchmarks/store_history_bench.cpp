// store_history_bench: how fast the store answers the dashboard's history
// read with a realistic amount of data behind it.
//
// Fills a database through the real store API -- 1000 commits on one branch,
// one run each, 50 sweep points, 20 trials per point (1,000,000 trials), a
// summary per run x point, a pooled value per commit x point, a flag every
// 50 commits, a noise band per point -- then times, on a fresh read-only
// connection as the web server holds it:
//   - point_history over all 1000 commits (the history endpoint),
//   - commits(50) (the overview page),
//   - RunReader::table of one run (the commit page),
// each as the median of many calls. Also times the durable trial insert
// (one autocommit transaction per trial, as the runner stores them).
//
//   store_history_bench [--commits N] [--points P] [--trials T] [--calls K] [--db FILE] [--keep] [--reuse]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <time.h>
#include <unistd.h>

#include "store/analysis_store.h"
#include "store/history_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace pw = perfwatch::store;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int commits = 1000;
  int points = 50;
  int trials = 20;
  int calls = 200;
  std::filesystem::path db;
  bool keep = false;
  bool reuse = false;  // --reuse: time the reads on an existing --db, fill nothing
};

[[noreturn]] void die(const perfwatch::Error& e) {
  std::fprintf(stderr, "store_history_bench: %s\n", e.to_string().c_str());
  std::exit(1);
}

template <class R>
auto must(R&& r) {
  if (!r) die(r.error());
  if constexpr (!std::is_void_v<typename std::decay_t<R>::value_type>) return std::move(*r);
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// This thread's CPU time: unlike wall time, not inflated when other
// processes share the cores.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Timing {
  double median_ms, p90_ms, min_ms, max_ms, cpu_median_ms;
};

template <class F>
Timing time_calls(int calls, F&& f) {
  std::vector<double> ms, cpu_ms;
  f();  // warm: first call prepares the statements
  for (int i = 0; i < calls; ++i) {
    auto t0 = Clock::now();
    double c0 = thread_cpu_s();
    f();
    cpu_ms.push_back((thread_cpu_s() - c0) * 1e3);
    ms.push_back(seconds_since(t0) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu_ms.begin(), cpu_ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10], ms.front(), ms.back(), cpu_ms[cpu_ms.size() / 2]};
}

std::string sha_of(int i) {
  char buffer[41];
  std::snprintf(buffer, sizeof buffer, "%040x", 0x5eed0000 + i);
  return buffer;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--commits") o.commits = std::stoi(next());
    else if (a == "--points") o.points = std::stoi(next());
    else if (a == "--trials") o.trials = std::stoi(next());
    else if (a == "--calls") o.calls = std::stoi(next());
    else if (a == "--db") o.db = next();
    else if (a == "--keep") o.keep = true;
    else if (a == "--reuse") o.reuse = o.keep = true;
    else {
      std::fprintf(stderr, "usage: %s [--commits N] [--points P] [--trials T] [--calls K] [--db FILE] [--keep] [--reuse]\n",
                   argv[0]);
      return 2;
    }
  }
  if (o.db.empty())
    o.db = std::filesystem::temp_directory_path() / ("store_history_bench_" + std::to_string(getpid()) + ".db");
  if (!o.reuse)
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o.db.string() + suffix);

  // ---------------------------------------------------------------- fill
  auto t_fill = Clock::now();
  double trial_insert_s = 0;
  if (!o.reuse) {
    auto db = must(pw::Database::open(o.db));
    pw::RepoWriter repos(db);
    pw::RunWriter runs(db);
    pw::AnalysisWriter analysis(db);
    auto repo = must(repos.ensure_repo({.path = "/bench/mla", .name = "mla"}));
    auto testbed = must(runs.ensure_testbed({.name = "bench-cpu", .hostname = "bench", .backend = pw::Backend::kCpu,
                                             .device_name = "x86"}));
    std::vector<pw::PointId> points;
    for (int p = 0; p < o.points; ++p) {
      pw::PointRecord point{.key = "batch=" + std::to_string(p + 1), .label = "C" + std::to_string(p + 1),
                            .axes = {{"batch", p + 1}}};
      points.push_back(must(runs.ensure_point(point)));
      must(analysis.put_noise_band({.testbed_id = testbed, .variant = "base", .point_id = points.back(),
                                    .band_rel = 0.03, .method = "A/A K=6", .k_runs = 6, .calibrated = true,
                                    .source = pw::NoiseSource::kAa}));
    }
    std::vector<pw::TrialRecord> trials;
    std::vector<pw::SummaryRecord> summaries;
    unsigned seed = 12345;
    auto noise = [&] {
      seed = seed * 1103515245u + 12345u;
      return ((seed >> 8) % 1000) / 1000.0 - 0.5;
    };
    for (int c = 0; c < o.commits; ++c) {
      pw::CommitRecord commit{.repo_id = repo, .sha = sha_of(c), .parent_sha = c > 0 ? sha_of(c - 1) : "",
                              .author = "bench", .committed_at = 1'700'000'000 + c * 600,
                              .subject = "commit " + std::to_string(c)};
      auto commit_id = must(repos.put_commit(commit));
      auto run = must(runs.start_run({.commit_id = commit_id, .testbed_id = testbed}));
      auto variant = must(runs.add_variant({.run_id = run, .name = "base", .is_baseline = true}));
      trials.clear();
      summaries.clear();
      for (int p = 0; p < o.points; ++p) {
        double level = 10.0 * (p + 1) * (c >= o.commits / 2 ? 1.05 : 1.0);
        for (int t = 1; t <= o.trials; ++t) {
          double us = level * (1 + 0.01 * noise());
          trials.push_back({.run_id = run, .variant_id = variant, .point_id = points[p], .trial_no = t,
                            .metrics = {{"time_us", us}, {"tokens_per_s", (p + 1) * 1e6 / us}}, .steps = 10,
                            .throttled = false});
        }
        summaries.push_back({.run_id = run, .variant_id = variant, .point_id = points[p], .metric = "time_us",
                             .n = o.trials, .median = level, .ci_low = level * 0.995, .ci_high = level * 1.005,
                             .mean = level, .stddev = level * 0.003, .minimum = level * 0.99,
                             .maximum = level * 1.01, .stop_reason = "max_trials"});
      }
      auto t0 = Clock::now();
      must(runs.insert_trials(trials));
      trial_insert_s += seconds_since(t0);
      must(analysis.put_summaries(summaries));
      must(runs.finish_run(run, {.status = pw::RunStatus::kOk, .wall_s = 30.0}));
      for (int p = 0; p < o.points; ++p)
        must(analysis.put_commit_summary({.commit_id = commit_id, .testbed_id = testbed, .variant = "base",
                                          .point_id = points[p], .metric = "time_us", .runs = 1,
                                          .geomean_of_run_medians = summaries[p].median.value(),
                                          .ci_low = summaries[p].ci_low,
                                          .ci_high = summaries[p].ci_high}));
      if (c % 50 == 49)
        must(analysis.raise_flag({.commit_id = commit_id, .testbed_id = testbed, .variant = "base",
                                  .point_id = points[o.points / 2], .kind = pw::FlagKind::kRegression,
                                  .magnitude_rel = 0.05}));
      if (c % 100 == 99) std::fprintf(stderr, "\rfilled %d/%d commits", c + 1, o.commits);
    }
    std::fprintf(stderr, "\n");
    must(repos.set_branch_head(repo, "main", sha_of(o.commits - 1)));
  }
  double fill_s = seconds_since(t_fill);
  const long long total_trials = 1LL * o.commits * o.points * o.trials;

  // The durable path: one trial, one transaction, as the runner stores them.
  double single_us = 0;
  if (!o.reuse) {
    auto db = must(pw::Database::open(o.db));
    pw::RunWriter runs(db);
    auto run = must(runs.start_run({.commit_id = 1, .testbed_id = 1}));
    auto variant = must(runs.add_variant({.run_id = run, .name = "base"}));
    const int n = 2000;
    auto t0 = Clock::now();
    for (int t = 1; t <= n; ++t)
      must(runs.insert_trial({.run_id = run, .variant_id = variant, .point_id = 1, .trial_no = t,
                              .metrics = {{"time_us", 10}, {"tokens_per_s", 1}}, .steps = 10}));
    single_us = seconds_since(t0) / n * 1e6;
    must(runs.finish_run(run, {.status = pw::RunStatus::kOk}));
  }

  // ---------------------------------------------------------------- reads
  auto reader = must(pw::Database::open_read_only(o.db));
  pw::HistoryReader history(reader);
  pw::HistoryQuery q;
  q.start = {.repo_id = 1, .branch = "main"};
  q.variant = "base";
  q.point_key = "batch=" + std::to_string(o.points / 2 + 1);
  q.limit = o.commits;
  std::size_t entries = 0;
  auto t_history = time_calls(o.calls, [&] {
    auto h = must(history.point_history(q));
    entries = h.entries.size();
  });
  auto t_overview = time_calls(o.calls, [&] { must(history.commits(q.start, 50)); });
  pw::RunReader run_reader(reader);
  auto t_table = time_calls(o.calls, [&] { must(run_reader.table(o.commits / 2)); });

  auto size_mb = [&](const char* suffix) {
    std::error_code ec;
    auto s = std::filesystem::file_size(o.db.string() + suffix, ec);
    return ec ? 0.0 : s / 1048576.0;
  };
  std::printf("store_history_bench: %d commits x %d points x %d trials = %lld trials (db %.0f MB + wal %.0f MB)\n",
              o.commits, o.points, o.trials, total_trials, size_mb(""), size_mb("-wal"));
  std::printf("  fill through the API: %.1f s (insert_trials: %.2f us/trial in run-sized transactions)\n", fill_s,
              trial_insert_s / total_trials * 1e6);
  std::printf("  insert_trial, one durable transaction each: %.1f us/trial\n", single_us);
  std::printf("  wall time per call (median, p90, min, max) and CPU time (median), %d calls each:\n", o.calls);
  auto row = [](const std::string& what, const Timing& t) {
    std::printf("  %-36s median %7.2f ms  p90 %7.2f ms  min %7.2f ms  max %7.2f ms  cpu %7.2f ms\n", what.c_str(),
                t.median_ms, t.p90_ms, t.min_ms, t.max_ms, t.cpu_median_ms);
  };
  row("point_history(" + std::to_string(entries) + " commits)", t_history);
  row("commits(50) with status and cost", t_overview);
  row("RunReader::table (50 cells)", t_table);
  if (!o.keep)
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o.db.string() + suffix);
  else
    std::printf("  kept %s\n", o.db.c_str());
  return 0;
}
