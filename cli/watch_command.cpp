#include "cli/watch_command.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/cli_support.h"
#include "daemon/watch_lock.h"
#include "daemon/watcher.h"
#if PERFWATCH_HAVE_WEB
#include "web/server.h"
#endif

namespace perfwatch::cli {

namespace {

// Set by SIGINT/SIGTERM: the daemon stops between runs. A signal handler can
// only reach static storage, hence this one global.
std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop = true; }

struct WatchArgs {
  std::string repo;
  std::string branch;
  std::string manifest;
  bool once = false;
  double interval_s = 30;
  std::string since;
  int port = -1;
  std::string bind = "127.0.0.1";
  std::string token;
  std::string commit_url;
  std::string webhook;
  int window = 100;
  int build_slots = 2;
  std::uint64_t seed = 0;
  std::string executor;
};

int run_watch(const GlobalOptions& global, const WatchArgs& args) {
  // One daemon per database, decided before the database is touched.
  auto lock = daemon::WatchLock::take(std::filesystem::absolute(global.db));
  if (!lock) return report_error(lock.error());
  auto db = open_database(global);
  if (!db) return kExitStoreError;
  daemon::WatchOptions options;
  options.repo = std::filesystem::absolute(args.repo);
  options.branch = args.branch;
  if (!args.manifest.empty()) options.manifest_path = std::filesystem::absolute(args.manifest);
  options.state_dir = std::filesystem::absolute(global.state_dir_path());
  options.interval_s = args.interval_s;
  options.once = args.once;
  options.since = args.since;
  options.webhook_url = args.webhook;
  if (options.webhook_url.empty()) {
    if (const char* env = std::getenv("PERFWATCH_WEBHOOK_URL")) options.webhook_url = env;
  }
  options.change_point_window = args.window;
  options.build_slots = args.build_slots;
  options.seed = args.seed;
  auto executor = load_executor_option(args.executor);
  if (!executor) return report_error(executor.error());
  options.executor = std::move(*executor);

  daemon::EventLog log;
  if (lock->taken_over()) {
    log.event("lock").add("status", "taken_over").add("stale", *lock->taken_over()).add("file", lock->path().string());
  }
  auto watcher = daemon::Watcher::open(*db, options, log);
  if (!watcher) return report_error(watcher.error());

#if PERFWATCH_HAVE_WEB
  std::unique_ptr<web::Server> server;
  if (args.port >= 0) {
    web::ServerOptions so;
    so.db = global.db;
    so.bind = args.bind;
    so.port = args.port;
    so.token = args.token;
    so.commit_url = args.commit_url;
    if (so.token.empty()) {
      if (const char* env = std::getenv("PERFWATCH_TOKEN")) so.token = env;
    }
    auto started = web::Server::start(so);
    if (!started) return report_error(started.error());
    server = std::move(*started);
    log.event("serve").add("url", "http://" + args.bind + ":" + std::to_string(server->port()) + "/");
  }
#else
  if (args.port >= 0) {
    std::fprintf(stderr, "perfwatch: --port: this perfwatch was built without web/ (the dashboard)\n");
    return kExitBadInput;
  }
#endif

  log.event("watch")
      .add("repo", options.repo.string())
      .add("branch", (*watcher)->branch())
      .add("db", global.db)
      .add("once", options.once ? "yes" : "no")
      .add("interval_s", options.interval_s)
      .add("since", options.since.empty() ? std::string("-") : options.since)
      .add("executor", options.executor.kind);
  for (const auto& t : options.executor.testbeds) {
    log.event("testbed").add("name", t.name.empty() ? std::string("-") : t.name).add("what", t.description).add(
        "slots", static_cast<long long>(t.slots.size()));
  }

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  auto status = (*watcher)->run(g_stop);
  if (!status) return report_error(status.error());
  log.event("stop").add("reason", g_stop ? "signal" : "queue empty (--once)");
  return kExitOk;
}

}  // namespace

void add_watch_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "watch", "Watch a branch: benchmark every new first-parent commit, judge it against its noise band, record "
               "flags and experiments (one log line per event on stderr)");
  cmd->add_option("--repo", args->repo, "The git repository to watch")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--branch", args->branch, "The branch to follow (default: the one HEAD is on)");
  cmd->add_option("--manifest", args->manifest, "A manifest to use instead of perfwatch.json in each commit")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--once", args->once, "Process everything new (and the queue), then exit");
  cmd->add_option("--interval", args->interval_s, "Seconds between polls of the branch")->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--since", args->since, "Back-fill: benchmark the branch's history from this revision (inclusive)");
  cmd->add_option("--port", args->port, "Serve the dashboard and the JSON API on this port while watching (0: any free port)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--bind", args->bind, "Address the dashboard listens on")->capture_default_str();
  cmd->add_option("--commit-url", args->commit_url,
                  "The dashboard links each commit to its code host: a URL with {sha} for the sha, "
                  "e.g. 'https://github.com/OWNER/REPO/commit/{sha}'");
  cmd->add_option("--token", args->token, "Bearer token for the API's writes (default: $PERFWATCH_TOKEN; none: writes refused)");
  cmd->add_option("--webhook", args->webhook,
                  "POST a JSON message here on each new regression (default: $PERFWATCH_WEBHOOK_URL)");
  cmd->add_option("--window", args->window, "Commits of history that change-point detection looks at")
      ->capture_default_str()->check(CLI::Range(8, 100000));
  cmd->add_option("--build-slots", args->build_slots,
                  "Persistent build folders: 2 keep the previous commit's build for A B A B re-runs; 1 saves a "
                  "full build and disk")
      ->capture_default_str()->check(CLI::Range(1, 8));
  cmd->add_option("--seed", args->seed, "Bench input seed (0: the bench picks one per run; stored either way)");
  cmd->add_option("--executor", args->executor,
                  "Where builds and benches run: a JSON config (schemas/executor.schema.json) naming local, "
                  "local-gpus (every GPU of this machine) or slurm (partitions as testbeds); default: local")
      ->check(CLI::ExistingFile);
  cmd->callback([&global, args, exit_code] { *exit_code = run_watch(global, *args); });
}

}  // namespace perfwatch::cli
