// daemon_overhead_bench: what the daemon itself costs per commit, outside
// builds and bench processes, and whether it grows with the history.
//
//   A. A history of N commits that each change the manifest's paths, watched
//      with `--since` (back-fill) by the real daemon (in-process Watcher)
//      with the fast fake bench (tests/runner/fake_bench) slowed at random
//      per process (run-to-run noise, so change-point detection has work):
//      3 runs a commit, 2 variants x 6 batch sizes. Each job's daemon_s
//      (its wall time minus the time in bench_commit: checkout, build, bench)
//      is read from the event log and summarised by position in the history.
//   B. A back-fill of 200 docs-only commits after one measured commit: total
//      wall time, builds and runs (they must be 1 and 3: the rest inherit).
//
// usage: daemon_overhead_bench [--commits N] [--fake-bench PATH] [--keep DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/event_log.h"
#include "daemon/watcher.h"
#include "store/database.h"
#include "store/history_store.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace perfwatch;

namespace {

int sh(const std::string& command) { return std::system(command.c_str()); }

json manifest(const std::string& fake_bench) {
  // Each bench process slows variant `base` by a random factor in [1, 1.02).
  const std::string bench = "FAKE_BENCH_SLOW=base:$(od -An -N2 -tu2 /dev/urandom | awk '{printf \"%.6f\", 1 + 0.02 * $1 / 65536}') exec " + fake_bench;
  return {{"schema_version", 1},
          {"build", {{"command", "true"}}},
          {"paths", {"src/", "perfwatch.json"}},
          {"bench", {{"command", bench}, {"timeout_s", 60}, {"idle_timeout_s", 20}}},
          {"variants",
           {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}}}},
            {{"name", "wide"}, {"params", {{"block_t", 64}}}}}},
          {"sweep", {{"batch", {1, 8, 48, 64, 80, 96}}}},
          {"trials", {{"min", 3}, {"max", 3}, {"target_rel_ci", 0.5}, {"budget_s", 30}}},
          {"runs", {{"per_commit", 3}, {"max_per_commit", 3}}}};
}

// A repo at `dir` with one commit of the manifest, then `n` commits that
// change src/ (code) or README.md (docs) each.
void make_repo(const fs::path& dir, const json& m, int n, bool docs) {
  fs::create_directories(dir);
  std::FILE* f = std::fopen((dir / "perfwatch.json").c_str(), "w");
  std::fputs(m.dump(2).c_str(), f);
  std::fclose(f);
  std::string script = "cd '" + dir.string() + "' && git init -q -b main && git config user.name bench && "
                       "git config user.email bench@example.com && mkdir -p src && echo 0 > src/k.c && "
                       "git add -A && git commit -q -m first && i=1; while [ $i -le " + std::to_string(n) +
                       " ]; do echo $i >> " + (docs ? "README.md" : "src/k.c") +
                       " && git add -A && git commit -q -m \"change $i\"; i=$((i+1)); done";
  if (sh(script) != 0) {
    std::fprintf(stderr, "daemon_overhead_bench: making the repo in %s failed\n", dir.c_str());
    std::exit(1);
  }
}

struct JobTiming {
  double wall_s = 0, bench_s = 0, daemon_s = 0;
};

double field(const std::string& line, const std::string& key) {
  auto at = line.find(" " + key + "=");
  return at == std::string::npos ? 0 : std::atof(line.c_str() + at + key.size() + 2);
}

struct Watched {
  std::vector<JobTiming> jobs;  // in the order they finished
  double total_s = 0;
  long builds = 0, runs = 0;
};

Watched watch(const fs::path& dir) {
  Watched out;
  auto db = store::Database::open(dir / "perfwatch.db");
  if (!db) {
    std::fprintf(stderr, "daemon_overhead_bench: %s\n", db.error().to_string().c_str());
    std::exit(1);
  }
  daemon::EventLog log([&](std::string_view l) {
    std::string line(l);
    if (line.find(" step=done ") != std::string::npos) {
      out.jobs.push_back({field(line, "wall_s"), field(line, "bench_s"), field(line, "daemon_s")});
    }
    if (line.find(" step=build ") != std::string::npos) ++out.builds;
    if (line.find(" step=run ") != std::string::npos) ++out.runs;
  });
  daemon::WatchOptions o;
  o.repo = dir / "repo";
  o.branch = "main";
  o.state_dir = dir / "work";
  o.once = true;
  o.since = "HEAD~0";
  // The whole first-parent history: --since the root commit.
  std::string root;
  {
    std::FILE* p = ::popen(("git -C '" + o.repo.string() + "' rev-list --max-parents=0 HEAD").c_str(), "r");
    char buf[128] = {};
    if (p && std::fgets(buf, sizeof buf, p)) root = buf;
    if (p) ::pclose(p);
    while (!root.empty() && root.back() == '\n') root.pop_back();
  }
  o.since = root;
  auto w = daemon::Watcher::open(*db, o, log);
  if (!w) {
    std::fprintf(stderr, "daemon_overhead_bench: %s\n", w.error().to_string().c_str());
    std::exit(1);
  }
  std::atomic<bool> stop{false};
  auto t0 = std::chrono::steady_clock::now();
  auto s = (*w)->run(stop);
  out.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s) {
    std::fprintf(stderr, "daemon_overhead_bench: %s\n", s.error().to_string().c_str());
    std::exit(1);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int commits = 250;
  std::string fake = FAKE_BENCH_PATH;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--commits") && i + 1 < argc) commits = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--fake-bench") && i + 1 < argc) fake = argv[++i];
    else if (!std::strcmp(argv[i], "--keep") && i + 1 < argc) keep = argv[++i];
    else {
      std::fprintf(stderr, "usage: daemon_overhead_bench [--commits N] [--fake-bench PATH] [--keep DIR]\n");
      return 2;
    }
  }
  fs::path base = keep.empty() ? fs::temp_directory_path() / ("perfwatch-overhead-" + std::to_string(::getpid()))
                                : fs::path(keep);
  fs::remove_all(base);
  const json m = manifest(fake);

  // A. History growth.
  make_repo(base / "history" / "repo", m, commits - 1, /*docs=*/false);
  Watched a = watch(base / "history");
  std::printf("A. %d commits that change the manifest's paths, back-filled; 3 runs each, 2 variants x 6 points\n\n",
              commits);
  std::printf("| commits (position in history) | jobs | daemon_s mean | daemon_s max | bench+build s mean |\n");
  std::printf("|---|---|---|---|---|\n");
  const int edges[] = {1, 10, 50, 100, 150, 200, 250, 500, 1000, 100000};
  for (std::size_t e = 0; e + 1 < std::size(edges); ++e) {
    double sum = 0, mx = 0, bench = 0;
    int n = 0;
    for (int j = edges[e] - 1; j < std::min<int>(edges[e + 1] - 1, a.jobs.size()); ++j) {
      sum += a.jobs[j].daemon_s;
      mx = std::max(mx, a.jobs[j].daemon_s);
      bench += a.jobs[j].bench_s;
      ++n;
    }
    if (n == 0) break;
    std::printf("| %d-%d | %d | %.3f | %.3f | %.3f |\n", edges[e], edges[e] + n - 1, n, sum / n, mx, bench / n);
  }
  std::printf("\nTotal %.1f s for %zu jobs (%ld builds, %ld runs).\n\n", a.total_s, a.jobs.size(), a.builds, a.runs);

  // B. Back-fill of docs-only commits.
  make_repo(base / "docs" / "repo", m, 200, /*docs=*/true);
  Watched b = watch(base / "docs");
  double sum = 0, mx = 0;
  for (std::size_t j = 1; j < b.jobs.size(); ++j) {
    sum += b.jobs[j].wall_s;
    mx = std::max(mx, b.jobs[j].wall_s);
  }
  const double n = static_cast<double>(b.jobs.size() > 1 ? b.jobs.size() - 1 : 1);
  std::printf("B. Back-fill of 1 measured commit + 200 docs-only commits\n\n");
  std::printf("| jobs | builds | runs | total s | per docs-only commit: mean s | max s |\n|---|---|---|---|---|---|\n");
  std::printf("| %zu | %ld | %ld | %.1f | %.3f | %.3f |\n", b.jobs.size(), b.builds, b.runs, b.total_s, sum / n, mx);
  if (keep.empty()) fs::remove_all(base);
  return 0;
}
