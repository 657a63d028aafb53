// web_history_bench: how fast the web server answers the dashboard's
// history request, end to end over HTTP on loopback, with a million trials
// stored.
//
// Fills a database through the real store code (tests/web/fixture_builder:
// 1000 commits on one branch, 2 runs each, 2 variants x 50 sweep points x 5
// trials per run = 1,000,000 trials, run summaries, pooled values per
// commit, comparisons and flags between consecutive commits, noise bands),
// starts web::Server on a free loopback port (read-only, as `perfwatch
// serve`), and times GET /api/v1/history over one keep-alive connection:
// every commit of the branch (limit=1000) and the chart's default (limit=200),
// for a different point each request, as median, p95 and max of many
// requests. The other pages' requests are timed too. Wall time includes
// the request, the store reads, JSON rendering and the transfer.
//
//   web_history_bench [--db FILE] [--reuse] [--requests N] [--commits N] [--points P]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "history_fixture.h"
#include "web/server.h"

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

struct Options {
  fs::path db;
  bool reuse = false;
  int requests = 200;
  int commits = 1000;
  int points = 50;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "web_history_bench: %s\n", what.c_str());
  std::exit(1);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + ": needs a value");
      return argv[++i];
    };
    if (a == "--db") o.db = value();
    else if (a == "--reuse") o.reuse = true;
    else if (a == "--requests") o.requests = std::stoi(value());
    else if (a == "--commits") o.commits = std::stoi(value());
    else if (a == "--points") o.points = std::stoi(value());
    else die("unknown argument " + a);
  }
  if (o.db.empty()) o.db = fs::temp_directory_path() / ("web_history_bench_" + std::to_string(getpid()) + ".db");
  return o;
}

struct Stats {
  double median_ms = 0, p95_ms = 0, max_ms = 0;
  double cpu_ms = 0;  // CPU time of this process (server and client threads) per request
  std::size_t bytes = 0;
};

// User + system CPU time of the whole process, ms: unlike wall time, not
// inflated when other processes share the cores.
double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

Stats stats(std::vector<double> ms, std::size_t bytes, double cpu_ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * (ms.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.95), ms.back(), cpu_ms / static_cast<double>(ms.size()), bytes};
}

// Times `requests` GETs of paths produced by `path_of(i)`; each must be 200.
template <class F>
Stats time_requests(httplib::Client& client, int requests, F path_of) {
  std::vector<double> ms;
  std::size_t bytes = 0;
  double cpu0 = process_cpu_ms();
  for (int i = 0; i < requests; ++i) {
    std::string path = path_of(i);
    auto t0 = Clock::now();
    auto r = client.Get(path.c_str());
    double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!r) die(path + ": no response");
    if (r->status != 200) die(path + ": HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 300));
    ms.push_back(elapsed);
    bytes = r->body.size();
  }
  return stats(std::move(ms), bytes, process_cpu_ms() - cpu0);
}

void row(const char* what, const Stats& s) {
  std::printf("| %-44s | %9.2f | %8.2f | %8.2f | %10.2f | %9zu |\n", what, s.median_ms, s.p95_ms, s.max_ms, s.cpu_ms,
              s.bytes);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  auto spec = perfwatch::benchmarks::history_fixture_spec(o.commits, o.points);

  std::int64_t trials = 0;
  if (!o.reuse) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(o.db.string() + suffix, ec);
    auto t0 = Clock::now();
    auto info = perfwatch::web::testing::build_fixture(o.db, spec);
    if (!info) die(info.error().to_string());
    trials = info->trials;
    std::fprintf(stderr, "filled %s: %lld trials in %.1f s\n", o.db.c_str(), static_cast<long long>(trials),
                 std::chrono::duration<double>(Clock::now() - t0).count());
  }

  perfwatch::web::ServerOptions so;
  so.db = o.db;
  so.port = 0;
  so.read_only = true;
  so.limits.expensive_burst = 1e9;  // the benchmark is one client asking as fast as it can
  auto server = perfwatch::web::Server::start(so);
  if (!server) die(server.error().to_string());
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_keep_alive(true);
  client.set_read_timeout(30, 0);

  auto series = client.Get("/api/v1/series");
  if (!series || series->status != 200) die("/api/v1/series failed");
  auto doc = nlohmann::json::parse(series->body);
  std::vector<std::string> points;
  for (const auto& p : doc["points"]) points.push_back(p["key"]);
  std::string variant = doc["variants"][0]["name"];
  auto commits = nlohmann::json::parse(client.Get("/api/v1/commits?limit=50")->body);
  std::string sha = commits["commits"][10]["sha"];
  auto run_ids = nlohmann::json::parse(client.Get(("/api/v1/commits/" + sha).c_str())->body)["runs"];
  std::string run = std::to_string(run_ids[0]["id"].get<long long>());

  auto history = [&](int limit) {
    return [&, limit](int i) {
      return "/api/v1/history?variant=" + variant + "&point=" + perfwatch::benchmarks::query_value(points[static_cast<std::size_t>(i) % points.size()]) +
             "&limit=" + std::to_string(limit);
    };
  };
  // Warm up: the page cache and the connection pool, as a running server has them.
  time_requests(client, static_cast<int>(points.size()), history(1000));

  auto full = time_requests(client, o.requests, history(1000));
  auto chart = time_requests(client, o.requests, history(200));
  auto overview = time_requests(client, o.requests, [](int i) { return "/api/v1/commits?limit=25&offset=" + std::to_string((i % 40) * 25); });
  auto commit_page = time_requests(client, o.requests / 4, [&](int) { return "/api/v1/commits/" + sha; });
  auto ab = time_requests(client, o.requests / 4, [&](int) { return "/api/v1/ab?commit=" + sha; });
  auto run_table = time_requests(client, o.requests / 4, [&](int) { return "/api/v1/runs/" + run; });
  auto flags = time_requests(client, o.requests / 4, [](int) { return std::string("/api/v1/flags?state=any&limit=100"); });

  std::printf("web_history_bench: %d commits x 2 runs x 2 variants x %d points x 5 trials%s; %d requests each over one\n"
              "keep-alive loopback connection; times are wall-clock per request (send, server, JSON, receive);\n"
              "cpu ms/req is the whole process' CPU time (server and client) over the requests.\n\n",
              o.commits, o.points, trials ? (" = " + std::to_string(trials) + " trials").c_str() : "", o.requests);
  std::printf("| request                                      | median ms |   p95 ms |   max ms | cpu ms/req | bytes     |\n");
  std::printf("|----------------------------------------------|----------:|---------:|---------:|-----------:|----------:|\n");
  row("history, all 1000 commits (limit=1000)", full);
  row("history, chart default (limit=200)", chart);
  row("commits page (limit=25, offsets to 975)", overview);
  row("one commit's page (table, flags, runs)", commit_page);
  row("A/B of one commit", ab);
  row("one run's table (100 cells)", run_table);
  row("flags (limit=100)", flags);
  (*server)->stop();
  return 0;
}
