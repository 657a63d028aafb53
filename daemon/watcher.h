// The daemon: follows one branch of a repo and works the job queue.
//
// poll() compares the branch head with the head it last acted on (stored
// as watch state) and queues every new first-parent commit, oldest first.
// A head that is no longer a descendant of the stored one is a force-push:
// it is logged, the commits after the merge base are queued, and queued
// jobs for commits that left the branch are skipped with the reason. The
// first poll of a branch queues its head only, unless --since asks for
// history (a back-fill from that revision, inclusive).
//
// work_one() claims the next job (the store's queue: highest priority,
// then oldest) and runs it (commit_job.h; noise jobs: noise.h); whatever
// happens to the commit, the job ends done, failed or skipped with a
// message, and the queue moves on. Only a store failure is an error.
//
// With an executor of several testbeds (executor.h: a Slurm cluster's
// partitions, a machine's GPU models) every new commit gets a job per
// testbed, and each testbed has a worker thread of its own -- its own
// connection to the store, build folders under <state>/testbeds/<name>/ --
// that works only its testbed's jobs, so a commit is measured on all of
// them at once. The main thread polls the branch and delivers webhooks.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "common/result.h"
#include "daemon/context.h"

namespace perfwatch::daemon {

// Claims the next job of `ctx.testbed` (of any testbed when the context's
// executor has one) and works it; false when there was none.
Result<bool> work_one(Context& ctx);

class Watcher {
 public:
  // Checks the repo and the branch (default: the one HEAD is on), records
  // the repo, and sets up the webhook if one is configured.
  static Result<std::unique_ptr<Watcher>> open(store::Database& db, const WatchOptions& options, EventLog& log);

  const std::string& branch() const { return branch_; }
  store::RepoId repo() const { return ctx_.repo; }
  Context& context() { return ctx_; }

  // Jobs a killed daemon left running become cut_off (their running runs
  // too) and are queued again once -- or, out of attempts, gave_up, with a
  // log line saying how to re-queue them; webhook messages still pending
  // are delivered (what is due). Call before working the queue.
  Status recover();

  // Queues the branch's new commits; returns how many jobs were created.
  Result<int> poll();

  // Claims and works one job; false when the queue was empty (or the job
  // was interrupted by a stop request: it stays running for the next start).
  Result<bool> work_one();

  // recover(); then poll and work until the queue is empty, polling again
  // every interval_s; with options.once, return then; otherwise sleep and
  // repeat until `stop` is set (checked between runs, between jobs and
  // while sleeping). Webhook messages that are due are delivered after
  // each job and every 5 s while it sleeps.
  Status run(const std::atomic<bool>& stop);

 private:
  // Several testbeds: a worker each, while this thread polls and delivers.
  Status run_testbeds(const std::atomic<bool>& stop);
  Watcher(store::Database& db, EventLog& log, const WatchOptions& options, store::RepoId repo, std::string branch);
  WatchOptions options_;
  Context ctx_;
  std::string branch_;
  bool since_done_ = false;
};

}  // namespace perfwatch::daemon
