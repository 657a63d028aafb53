// What every step of the daemon's work shares: the store, the log, the
// options, the watched repo, the outside world (env.h) and the build slots.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "analysis/compare.h"
#include "daemon/env.h"
#include "daemon/event_log.h"
#include "daemon/executor.h"
#include "daemon/webhook.h"
#include "daemon/webhook_outbox.h"
#include "daemon/workbench.h"
#include "runner/git.h"
#include "store/database.h"
#include "store/ids.h"

namespace perfwatch::daemon {

struct WatchOptions {
  std::filesystem::path repo;
  std::string branch;  // empty: the branch the repo's HEAD is on
  // A manifest to use instead of perfwatch.json in each commit.
  std::optional<std::filesystem::path> manifest_path;
  std::filesystem::path state_dir;  // worktrees/ and logs/
  double interval_s = 30;           // between polls of the branch
  bool once = false;                // process everything new, then return
  std::string since;                // back-fill from this revision (inclusive); empty: from the head on
  std::string webhook_url;          // empty: none
  DeliveryPolicy webhook_delivery;  // retries of the outbox's messages
  std::uint64_t seed = 0;           // bench input seed; 0 = the bench picks one per run
  // Commits of history that change-point detection looks at (the newest
  // ones): the work per commit does not grow with the history's length.
  int change_point_window = 100;
  int max_attempts = 3;             // a job cut off this many times is not redone
  // Rotating build slots (persistent worktrees). With 2, the previous
  // commit's build stays at hand while the next is measured, so undecided
  // comparisons grow both sides (A B A B); the price is a second full build
  // once, when the slots are first filled. With 1, every build is
  // incremental but only the new commit's side can grow.
  int build_slots = 2;
  analysis::ComparePolicy policy;
  // Where builds and benches run (executor.h): each testbed measures every
  // commit, one job each; with several testbeds each has a worker thread.
  Executor executor = local_executor();
};

struct Context {
  store::Database& db;
  EventLog& log;
  const WatchOptions& options;
  // The watcher's polling and the CLI's own commands read git here; a commit
  // job reaches the world only through `env`.
  runner::Git git;
  SystemEnv system_env;
  Env& env;  // system_env, or the one a test passed
  store::RepoId repo = 0;
  Workbench workbench;
  std::optional<Webhook> webhook;  // the configured one: new messages go to its URL
  // Where the outbox's messages are POSTed (any URL they name, configured
  // now or when they were written): http_poster, or the one a test set.
  HttpWebhookPoster http_poster;
  WebhookPoster* poster = &http_poster;
  // Set when the daemon is asked to stop (SIGINT/SIGTERM): a job stops
  // between runs and is left running, so the next start redoes it.
  const std::atomic<bool>* stop = nullptr;
  bool stopping() const { return stop && stop->load(); }
  // The executor's testbed this context measures on (executor.h): its name
  // in the queue and the slots its runs spread over. By default this
  // machine, one slot.
  ExecutorTestbed testbed = local_executor().testbeds.front();
  // A testbed's worker leaves delivery to the watcher's main loop, so that
  // no two threads POST one message.
  bool delivers_webhooks = true;

  Context(store::Database& db_, EventLog& log_, const WatchOptions& options_, store::RepoId repo_,
          Env* env_ = nullptr)
      : db(db_), log(log_), options(options_), git(options_.repo),
        system_env(options_.repo, options_.manifest_path), env(env_ ? *env_ : system_env), repo(repo_),
        workbench(options_.state_dir, options_.repo, options_.build_slots) {}
  // `poster` may point at this Context's own http_poster: never copied.
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

}  // namespace perfwatch::daemon
