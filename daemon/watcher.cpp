#include "daemon/watcher.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "daemon/bench_commit.h"
#include "daemon/commit_job.h"
#include "daemon/leftovers.h"
#include "daemon/noise.h"
#include "daemon/notify.h"
#include "store/job_progress_store.h"
#include "store/outbox_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"

namespace perfwatch::daemon {

namespace {

using Clock = std::chrono::steady_clock;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

Watcher::Watcher(store::Database& db, EventLog& log, const WatchOptions& options, store::RepoId repo,
                 std::string branch)
    : options_(options), ctx_(db, log, options_, repo), branch_(std::move(branch)) {
  ctx_.testbed = options_.executor.testbeds.front();
}

Result<std::unique_ptr<Watcher>> Watcher::open(store::Database& db, const WatchOptions& options, EventLog& log) {
  runner::Git git(options.repo);
  if (auto ok = git.check(); !ok) return fail(ok.error());
  std::string branch = options.branch;
  if (branch.empty()) {
    auto head = git.run({"symbolic-ref", "--short", "HEAD"});
    if (!head) return fail(invalid_argument("--branch", "the repo's HEAD is detached: name the branch to watch"));
    branch = trim(*head);
  }
  if (auto head = git.resolve("refs/heads/" + branch); !head) {
    return fail(invalid_argument("--branch " + branch, "no such branch in " + options.repo.string()));
  }
  auto repo = record_repo(db, options.repo);
  if (!repo) return fail(repo.error());
  std::unique_ptr<Watcher> w(new Watcher(db, log, options, *repo, branch));
  if (!options.webhook_url.empty()) {
    auto hook = Webhook::make(options.webhook_url);
    if (!hook) return fail(hook.error());
    w->ctx_.webhook = std::move(*hook);
  }
  return w;
}

Status Watcher::recover() {
  // First what a killed daemon left running: its builds and benches.
  auto left = end_leftovers(ctx_.db);
  if (!left) return fail(left.error());
  for (const auto& g : left->groups) {
    ctx_.log.event("recover")
        .add("group", static_cast<long long>(g.record.pgid))
        .add("what", g.record.what)
        .add("status", std::string(runner::to_string(g.what)));
  }
  for (store::RunId id : left->runs_cut_off) ctx_.log.event("recover").add("run", static_cast<long long>(id)).add("status", "cut_off");
  auto r = store::JobQueue(ctx_.db).recover_after_crash(options_.max_attempts);
  if (!r) return fail(r.error());
  for (store::JobId id : r->cut_off) ctx_.log.event("recover").add("job", static_cast<long long>(id)).add("status", "cut_off");
  for (store::RunId id : r->runs_cut_off) ctx_.log.event("recover").add("run", static_cast<long long>(id)).add("status", "cut_off");
  for (store::JobId id : r->requeued) ctx_.log.event("recover").add("job", static_cast<long long>(id)).add("status", "requeued");
  // Given up on: said once, here, with what to do about it.
  for (const auto& job : r->gave_up) {
    ctx_.log.event("recover")
        .commit(job.commit_sha)
        .add("job", static_cast<long long>(job.id))
        .add("status", "gave_up")
        .add("attempts", static_cast<long long>(job.attempts - job.stops))
        .add("stops", static_cast<long long>(job.stops))
        .add("requeue_with", "perfwatch jobs requeue " + job.commit_sha.substr(0, 10))
        .add("message", job.message);
  }
  // Webhook messages a killed daemon stored and did not deliver: now.
  auto outbox = store::OutboxReader(ctx_.db).counts();
  if (!outbox) return fail(outbox.error());
  if (const auto pending = (*outbox)[store::OutboxState::kPending]; pending > 0)
    ctx_.log.event("recover").add("webhooks_pending", static_cast<long long>(pending));
  return deliver_webhooks(ctx_);
}

Result<int> Watcher::poll() {
  runner::Git& git = ctx_.git;
  auto head = git.resolve("refs/heads/" + branch_);
  if (!head) return fail(head.error());
  auto known = store::RepoReader(ctx_.db).branch(ctx_.repo, branch_);
  if (!known) return fail(known.error());
  const std::string old_head = *known ? (*known)->head_sha : "";

  struct Batch {
    std::vector<std::string> shas;
    store::JobKind kind;
  };
  std::vector<Batch> batches;
  if (!options_.since.empty() && !since_done_) {
    auto since = git.resolve(options_.since);
    if (!since) return fail(invalid_argument("--since " + options_.since, since.error().message));
    auto info = git.commit_info(*since);
    if (!info) return fail(info.error());
    auto on_branch = git.is_ancestor(*since, *head);
    if (!on_branch) return fail(on_branch.error());
    if (!*on_branch) return fail(invalid_argument("--since " + options_.since, "is not on branch " + branch_));
    auto range = git.first_parent_range(info->parent_sha, *head);
    if (!range) return fail(range.error());
    batches.push_back({*range, store::JobKind::kBackfill});
    since_done_ = true;
  }
  if (old_head.empty()) {
    if (batches.empty()) batches.push_back({{*head}, store::JobKind::kBench});
  } else if (old_head != *head) {
    auto descends = git.is_ancestor(old_head, *head);
    if (descends && *descends) {
      auto range = git.first_parent_range(old_head, *head);
      if (!range) return fail(range.error());
      batches.push_back({*range, store::JobKind::kBench});
    } else {
      // A force-push: the old head is gone from the branch (or from the repo).
      std::string base;
      if (auto mb = git.run({"merge-base", old_head, *head})) base = trim(*mb);
      ctx_.log.event("poll")
          .add("event", "force_push")
          .add("branch", branch_)
          .add("old", old_head.substr(0, 10))
          .add("new", head->substr(0, 10))
          .add("merge_base", base.empty() ? std::string("none") : base.substr(0, 10));
      if (base.empty()) {
        batches.push_back({{*head}, store::JobKind::kBench});
      } else {
        auto range = git.first_parent_range(base, *head);
        if (!range) return fail(range.error());
        batches.push_back({*range, store::JobKind::kBench});
      }
      // Queued work for commits that left the branch is dropped, with the reason.
      store::JobFilter filter;
      filter.repo_id = ctx_.repo;
      filter.state = store::JobState::kQueued;
      filter.limit = 100000;
      auto queued = store::JobReader(ctx_.db).jobs(filter);
      if (!queued) return fail(queued.error());
      for (const auto& job : *queued) {
        if (job.branch != branch_) continue;
        auto still = git.is_ancestor(job.commit_sha, *head);
        if (still && *still) continue;
        std::string why = "dropped from " + branch_ + " by a force-push (" + old_head.substr(0, 10) + " -> " +
                          head->substr(0, 10) + ")";
        if (auto s = store::JobQueue(ctx_.db).finish(job.id, store::JobState::kSkipped, why); !s) return fail(s.error());
        ctx_.log.event("skip").commit(job.commit_sha).add("job", static_cast<long long>(job.id)).add("message", why);
      }
    }
  }

  int created = 0;
  store::JobQueue queue(ctx_.db);
  for (const auto& batch : batches) {
    for (const auto& sha : batch.shas) {
      // Every testbed measures every commit.
      for (const auto& testbed : options_.executor.testbeds) {
        store::JobRequest r;
        r.repo_id = ctx_.repo;
        r.commit_sha = sha;
        r.branch = branch_;
        r.kind = batch.kind;
        r.testbed = testbed.name;
        auto q = queue.enqueue(r);
        if (!q) return fail(q.error());
        if (q->created) {
          ++created;
          auto e = ctx_.log.event("enqueue");
          e.commit(sha).add("job", static_cast<long long>(q->id)).add("kind", std::string(store::to_string(batch.kind)));
          if (!testbed.name.empty()) e.add("testbed", testbed.name);
        }
      }
    }
  }
  // Recorded after the jobs: a crash in between queues them again, and
  // enqueue() does not duplicate them.
  if (old_head != *head) {
    if (auto s = store::RepoWriter(ctx_.db).set_branch_head(ctx_.repo, branch_, *head); !s) return fail(s.error());
  }
  return created;
}

Result<bool> Watcher::work_one() { return daemon::work_one(ctx_); }

Result<bool> work_one(Context& ctx) {
  store::JobQueue queue(ctx.db);
  std::optional<std::string> only;
  if (ctx.options.executor.testbeds.size() > 1) only = ctx.testbed.name;
  auto claimed = queue.claim_next(only);
  if (!claimed) return fail(claimed.error());
  if (!*claimed) return false;
  const store::JobRecord& job = **claimed;
  ctx.log.event("claim")
      .commit(job.commit_sha)
      .add("job", static_cast<long long>(job.id))
      .add("kind", std::string(store::to_string(job.kind)))
      .add("attempt", static_cast<long long>(job.attempts))
      .add("confirm", job.options.contains("confirm") ? "yes" : "no")
      .add("testbed", job.testbed.empty() ? std::string("-") : job.testbed);
  store::JobProgress claimed_progress;
  claimed_progress.job_id = job.id;
  claimed_progress.step = store::JobStep::kClaimed;
  claimed_progress.commit = job.commit_sha;
  (void)store::JobProgressWriter(ctx.db).set(claimed_progress);
  auto t0 = Clock::now();
  Result<JobResult> result = job.kind == store::JobKind::kNoise ? run_noise_job(ctx, job) : run_commit_job(ctx, job);
  // Interrupted by a stop request (between runs, or a run cut off): left
  // running for the next start, and counted as a stop, not as an attempt.
  if (ctx.stopping() && (!result || result->state == store::JobState::kRunning ||
                          result->state == store::JobState::kFailed)) {
    const std::string why = "interrupted: the daemon was asked to stop; the next start redoes the job";
    if (auto s = queue.interrupted_by_stop(job.id, why); !s) return fail(s.error());
    ctx.log.event("interrupted").commit(job.commit_sha).add("job", static_cast<long long>(job.id)).add(
        "message", result ? result->message : result.error().to_string());
    return false;
  }
  if (!result) {
    // The daemon's own failure (the store): the job is left running, so the
    // next start finds it cut off and redoes it.
    ctx.log.event("job").commit(job.commit_sha).add("job", static_cast<long long>(job.id)).add("status", "error").add(
        "message", result.error().to_string());
    return fail(result.error());
  }
  if (result->state == store::JobState::kRunning) {
    // Interrupted by a stop request: left running, redone at the next start.
    ctx.log.event("interrupted").commit(job.commit_sha).add("job", static_cast<long long>(job.id)).add(
        "message", result->message);
    return false;
  }
  if (auto s = queue.finish(job.id, result->state, result->message); !s) return fail(s.error());
  store::JobProgress ended;
  ended.job_id = job.id;
  ended.step = store::final_step(result->state).value_or(store::JobStep::kDone);
  ended.commit = job.commit_sha;
  ended.message = result->message;
  (void)store::JobProgressWriter(ctx.db).set(ended);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  ctx.log.event("done")
      .commit(job.commit_sha)
      .add("job", static_cast<long long>(job.id))
      .add("status", std::string(store::to_string(result->state)))
      .add("wall_s", wall)
      .add("bench_s", result->bench_s)
      .add("daemon_s", result->daemon_s)
      .add("message", result->message);
  return true;
}

Status Watcher::run(const std::atomic<bool>& stop) {
  if (options_.executor.testbeds.size() > 1) return run_testbeds(stop);
  ctx_.stop = &stop;
  if (auto s = recover(); !s) return s;
  auto last_poll = Clock::time_point{};
  for (;;) {
    if (stop) return {};
    auto polled = poll();
    last_poll = Clock::now();
    if (!polled) ctx_.log.event("poll").add("status", "failed").add("message", polled.error().to_string());
    for (;;) {
      if (stop) return {};
      auto worked = work_one();
      if (!worked) return fail(worked.error());
      if (auto s = deliver_webhooks(ctx_); !s) return s;  // retries that came due meanwhile
      if (!*worked) break;
      // New commits may arrive while a long queue is worked.
      if (!options_.once && Clock::now() - last_poll > std::chrono::duration<double>(options_.interval_s)) {
        if (auto p = poll(); !p) ctx_.log.event("poll").add("status", "failed").add("message", p.error().to_string());
        last_poll = Clock::now();
      }
    }
    if (options_.once) return {};
    const auto wake = last_poll + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options_.interval_s));
    auto last_delivery = Clock::now();
    while (!stop && Clock::now() < wake) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (Clock::now() - last_delivery >= std::chrono::seconds(5)) {
        if (auto s = deliver_webhooks(ctx_); !s) return s;
        last_delivery = Clock::now();
      }
    }
  }
}

Status Watcher::run_testbeds(const std::atomic<bool>& stop) {
  ctx_.stop = &stop;
  if (auto s = recover(); !s) return s;
  if (auto p = poll(); !p) ctx_.log.event("poll").add("status", "failed").add("message", p.error().to_string());
  auto last_poll = Clock::now();

  struct Worker {
    WatchOptions options;
    ExecutorTestbed testbed;
    Status status;
    std::atomic<bool> finished{false};
  };
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::jthread> threads;
  for (const auto& t : options_.executor.testbeds) {
    auto w = std::make_unique<Worker>();
    w->options = options_;
    // Build folders and logs of their own: testbeds build concurrently.
    w->options.state_dir = options_.state_dir / "testbeds" / t.name;
    w->testbed = t;
    workers.push_back(std::move(w));
  }
  for (auto& w : workers) {
    threads.emplace_back([this, &stop, w = w.get()] {
      auto db = store::Database::open(ctx_.db.path());
      if (!db) {
        w->status = fail(db.error());
        w->finished = true;
        return;
      }
      Context ctx(*db, ctx_.log, w->options, ctx_.repo);
      ctx.testbed = w->testbed;
      ctx.stop = &stop;
      ctx.webhook = ctx_.webhook;
      ctx.delivers_webhooks = false;
      while (!stop) {
        Result<bool> worked = false;
        try {
          worked = daemon::work_one(ctx);
        } catch (const std::exception& e) {
          // A bug: this testbed's worker ends with it as its error, as a
          // store error ends it, instead of terminating the whole daemon unsaid.
          worked = fail(Error{ErrorCode::kInternal, "testbed " + w->testbed.name, e.what()});
        }
        if (!worked) {
          w->status = fail(worked.error());
          break;
        }
        if (*worked) continue;
        if (options_.once) break;  // its queue is empty; --once polls only once
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
      w->finished = true;
    });
  }

  auto last_delivery = Clock::now();
  const auto all_finished = [&] {
    return std::all_of(workers.begin(), workers.end(), [](const auto& w) { return w->finished.load(); });
  };
  Status delivered;
  while (!stop && !all_finished()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!options_.once && Clock::now() - last_poll > std::chrono::duration<double>(options_.interval_s)) {
      if (auto p = poll(); !p) ctx_.log.event("poll").add("status", "failed").add("message", p.error().to_string());
      last_poll = Clock::now();
    }
    if (Clock::now() - last_delivery >= std::chrono::seconds(1)) {
      // A store error here is the daemon's: returned once the workers end.
      if (auto s = deliver_webhooks(ctx_); !s && delivered) delivered = s;
      last_delivery = Clock::now();
    }
  }
  threads.clear();  // joins: a stop ends the workers between runs
  if (!delivered) return delivered;
  for (const auto& w : workers)
    if (!w->status) return w->status;
  return deliver_webhooks(ctx_);
}

}  // namespace perfwatch::daemon
