#include "daemon/commit_job.h"

#include <algorithm>
#include <optional>
#include <set>

#include "daemon/env.h"
#include "daemon/follow_up.h"
#include "daemon/inherit.h"
#include "daemon/job_runs.h"
#include "daemon/notify.h"
#include "daemon/pinned_baseline.h"
#include "judge/commit_runs.h"
#include "judge/judge_commit.h"
#include "judge/run_plan.h"
#include "store/history_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

namespace {

constexpr const char* kInterrupted = "interrupted: the daemon was asked to stop; the next start redoes the job";

// The job as a loop of named steps. Each step returns a JobResult when the
// job ends there; the state between steps is the members.
class CommitJob {
 public:
  CommitJob(Context& ctx, const store::JobRecord& job)
      : ctx_(ctx), job_(job), sha_(job.commit_sha), confirm_(job.options.contains("confirm")),
        started_s_(ctx.env.now_s()) {}

  Result<JobResult> run() {
    using Step = Result<std::optional<JobResult>> (CommitJob::*)();
    for (Step step : {&CommitJob::check, &CommitJob::load, &CommitJob::inherit, &CommitJob::pinned,
                      &CommitJob::first_runs, &CommitJob::grow, &CommitJob::judge}) {
      auto ended = (this->*step)();
      if (!ended) return fail(ended.error());
      if (*ended) return **ended;
    }
    const std::string message = std::to_string(ok_b_) + " ok run(s) of " + short_sha();
    if (!failure_.empty()) return finish(store::JobState::kFailed, failure_ + " (" + message + " kept and judged)");
    return finish(store::JobState::kDone, message);
  }

 private:
  using Ended = Result<std::optional<JobResult>>;
  static Ended go_on() { return std::optional<JobResult>{}; }
  std::string short_sha() const { return sha_.substr(0, 10); }

  // The commit must still exist, and (unless confirming) still be on the branch.
  Ended check() {
    if (!ctx_.env.resolve(sha_ + "^{commit}")) {
      return skipped("vanished", "commit " + short_sha() + " no longer exists in the repository");
    }
    if (job_.branch.empty() || confirm_) return go_on();
    auto head = ctx_.env.resolve("refs/heads/" + job_.branch);
    if (!head) return go_on();
    auto on_branch = ctx_.env.is_ancestor(sha_, *head);
    if (!on_branch || *on_branch) return go_on();
    return skipped("off_branch", "commit " + short_sha() + " is no longer on branch " + job_.branch + " (head " +
                                     head->substr(0, 10) + "): dropped by a force-push");
  }

  // Its manifest and record; a confirmation's cells.
  Ended load() {
    auto manifest = ctx_.env.manifest(sha_);
    if (!manifest) {
      ctx_.log.event("manifest").commit(sha_).add("status", "failed").add("message", manifest.error().to_string());
      return finish(store::JobState::kFailed, manifest.error().to_string());
    }
    manifest_ = std::move(*manifest);
    auto id = record_commit(ctx_.db, ctx_.repo, ctx_.env, sha_, manifest_);
    if (!id) return fail(id.error());
    auto commit = store::RepoReader(ctx_.db).commit(*id);
    if (!commit) return fail(commit.error());
    commit_ = *commit;
    runs_.emplace(ctx_, job_, manifest_, sha_);
    confirm_cells_ = cells_to_confirm(ctx_.db, job_.options);
    return go_on();
  }

  // A commit that changes none of the manifest's paths carries its parent's results.
  Ended inherit() {
    if (confirm_) return go_on();
    auto from = inherit_untouched(ctx_, commit_, manifest_);
    if (!from) return fail(from.error());
    if (!*from) return go_on();
    return finish(store::JobState::kDone, "inherits the results of " + (*from)->substr(0, 10) +
                                              ": touches none of the manifest's paths (no build, no bench)");
  }

  // The pinned baseline: re-run beside each run (runs.interleave_baseline),
  // or compared through its own runs, measured once when it has too few.
  Ended pinned() {
    auto pinned = find_pinned_baseline(ctx_, manifest_, sha_);
    if (!pinned) return fail(pinned.error());
    pinned_ = *pinned;
    pinned_reruns_allowed_ = pinned_ && manifest_.runs.interleave_baseline;
    if (!pinned_ || pinned_reruns_allowed_) return go_on();
    if (auto s = measure_pinned_once(ctx_, *runs_, manifest_, *pinned_, testbed_); !s) return fail(s.error());
    return go_on();
  }

  // The build and the first runs.per_commit runs (those an earlier, cut-off
  // attempt finished count).
  Ended first_runs() {
    if (!testbed_) {
      auto known = known_testbed(ctx_.db, ctx_.testbed);
      if (!known) return fail(known.error());
      testbed_ = *known;
    }
    auto ok = ok_bench_runs(ctx_.db, commit_.id, &testbed_);
    auto processes = judge::bench_processes(ctx_.db, commit_.id, testbed_);
    if (!ok) return fail(ok.error());
    if (!processes) return fail(processes.error());
    ok_b_ = *ok;
    processes_b_ = *processes;
    keep_ = build_to_keep(ctx_.db, commit_.id, testbed_);
    // With more slots than runs.per_commit (a machine's GPUs), each slot
    // measures once: the extra runs are evidence at no cost in wall time.
    const int per_commit = std::max(manifest_.runs.per_commit, std::min(runs_->slots(), manifest_.runs.max_per_commit));
    const int target = confirm_ ? 0 : job_.options.value("runs", per_commit);
    while (ok_b_ < target && failure_.empty() && processes_b_ < manifest_.runs.max_per_commit) {
      if (ctx_.stopping()) return finish(store::JobState::kRunning, kInterrupted);
      // As many at once as there are slots; a failed one ends the loop.
      std::vector<RunAsk> asks;
      const int n = std::min({target - ok_b_, manifest_.runs.max_per_commit - processes_b_, runs_->slots()});
      for (int k = 0; k < n; ++k) add_b(asks, target, ok_b_ + k + 1, {});
      if (auto s = run_all(std::move(asks)); !s) return fail(s.error());
    }
    if (ctx_.stopping()) return finish(store::JobState::kRunning, kInterrupted);
    if (ok_b_ == 0 || !testbed_) {
      return finish(store::JobState::kFailed, failure_.empty() ? "no run of " + short_sha() + " finished ok" : failure_);
    }
    return go_on();
  }

  // While the comparison with the previous commit is undecided (or, for a
  // confirmation, until its cells are decided): the run plan, then its runs, A B A B.
  Ended grow() {
    for (int look = 0; look < 16 && failure_.empty(); ++look) {
      auto prev = store::HistoryReader(ctx_.db).previous_measured(commit_.id, *testbed_);
      if (!prev) return fail(prev.error());
      previous_ = *prev;
      if (!previous_) return go_on();
      auto planned = plan_more_runs(ctx_, manifest_, *testbed_, *previous_, commit_.id, processes_b_, confirm_,
                                    confirm_cells_);
      if (!planned) return fail(planned.error());
      const judge::RunPlan& plan = *planned;
      if (plan.done()) return go_on();
      const auto points_a = point_keys(ctx_.db, manifest_, plan.a.points);
      const auto points_b = point_keys(ctx_.db, manifest_, plan.b.points);
      log_more_runs(ctx_, manifest_, sha_, previous_->sha, plan, points_a, points_b);
      // A B A B: the machine's slow drift hits both sides alike (and, over
      // several slots, the slots' differences too).
      std::vector<RunAsk> asks;
      const auto lease_a = ctx_.workbench.lease(previous_->sha, manifest_.build.command, {sha_});
      a_failed_ = false;
      for (int i = 0; i < std::max(plan.a.runs, plan.b.runs); ++i) {
        if (i < plan.a.runs) {
          asks.push_back({previous_->sha, store::RunKind::kBench, lease_a,
                          "re-run of " + previous_->sha.substr(0, 10) + " beside " + short_sha(), points_a, {}});
        }
        if (i < plan.b.runs) add_b(asks, ok_b_ + plan.b.runs, ok_b_ + i + 1, points_b, {lease_a.dir});
      }
      if (auto s = run_all(std::move(asks)); !s) return fail(s.error());
      if (ctx_.stopping()) return finish(store::JobState::kRunning, kInterrupted);
    }
    return go_on();
  }

  // Judging decides; this job announces what it returned and queues the
  // confirmations. What judging stores, the webhook messages that announce
  // it and the confirm jobs are one transaction: a crash leaves all or none
  // of them, and a redo judges (and announces) again. Delivery follows.
  Ended judge() {
    store::JobProgress analysing;
    analysing.step = store::JobStep::kAnalyse;
    runs_->progress(analysing);
    const judge::JudgeRequest r{&manifest_,      ctx_.repo, commit_,        *testbed_,
                                previous_,       pinned_,   pinned_reruns_, grown_,
                                confirm_cells_,  ctx_.options.policy,       ctx_.options.change_point_window};
    store::Transaction tx(ctx_.db);
    if (!tx.status()) return fail(tx.status().error());
    auto judged = judge::judge_commit(ctx_.db, r);
    if (!judged) return fail(judged.error());
    auto queued = queue_webhooks(ctx_, manifest_, commit_, job_.branch, *judged);
    if (!queued) return fail(queued.error());
    if (auto s = queue_confirmations(ctx_, job_.branch, judged->confirms); !s) return fail(s.error());
    if (auto s = queue_rejudge_of_descendants(ctx_, job_.branch, commit_, *testbed_); !s) return fail(s.error());
    if (auto s = tx.commit(); !s) return fail(s.error());
    announce(ctx_, manifest_, commit_, job_.branch, *judged, *queued);
    if (auto s = deliver_webhooks(ctx_); !s) return fail(s.error());
    return go_on();
  }

  // The `nth` run of this commit (of `of`), after a re-run of the pinned
  // baseline when interleaved; `taken`: the folders of the batch's other
  // commit (Workbench::lease).
  void add_b(std::vector<RunAsk>& asks, int of, int nth, const std::set<std::string>& only_points,
             const std::vector<std::filesystem::path>& taken = {}) {
    if (pinned_ && pinned_reruns_allowed_) {
      asks.push_back({pinned_->sha, store::RunKind::kBaselineRerun,
                      ctx_.workbench.named("pinned", pinned_->sha, manifest_.build.command),
                      "pinned baseline re-run beside " + short_sha(), {}, {}});
    }
    store::JobProgress progress;
    progress.run = nth;
    progress.runs_planned = of;
    auto lease = ctx_.workbench.lease(sha_, manifest_.build.command,
                                      keep_.empty() ? std::vector<std::string>{} : std::vector<std::string>{keep_}, taken);
    asks.push_back({sha_, store::RunKind::kBench, lease,
                    "run " + std::to_string(nth) + " of " + std::to_string(of) + " of " + short_sha(), only_points,
                    progress});
  }

  // The asks over the testbed's slots (job_runs.h). What each outcome means:
  // a pinned re-run that fails ends the re-runs (compared with what there
  // is); a re-run of the previous commit that fails ends its growth (only
  // this side grows); a run of this commit that fails ends the measuring.
  Status run_all(std::vector<RunAsk> asks) {
    auto skip = [&](const RunAsk& ask) {
      if (ctx_.stopping()) return true;
      if (ask.kind == store::RunKind::kBaselineRerun) return !pinned_reruns_allowed_ || !failure_.empty();
      if (ask.sha != sha_) return a_failed_ || !failure_.empty();
      return !failure_.empty() || processes_b_ >= manifest_.runs.max_per_commit;
    };
    auto done = [&](const RunAsk& ask, const BenchOutcome& out) -> Status {
      const bool ok = out.status == store::RunStatus::kOk;
      if (ask.kind == store::RunKind::kBaselineRerun) {
        if (ok) pinned_reruns_.insert(out.run);
        else pinned_reruns_allowed_ = false;
      } else if (ask.sha != sha_) {
        grown_.insert(previous_->id);
        if (!ok) a_failed_ = true;
      } else {
        if (out.status != store::RunStatus::kLost) ++processes_b_;  // as judge::bench_processes counts
        if (!ok) {
          if (failure_.empty()) failure_ = describe_failure(out);
        } else {
          ++ok_b_;
          if (out.testbed) testbed_ = out.testbed;
        }
      }
      return {};
    };
    return runs_->run_all(std::move(asks), skip, done);
  }

  JobResult skipped(const char* status, const std::string& why) {
    ctx_.log.event("check").commit(sha_).add("status", status).add("message", why);
    return finish(store::JobState::kSkipped, why);
  }
  JobResult finish(store::JobState state, std::string message) {
    const double bench_s = runs_ ? runs_->bench_s() : 0.0;
    return {state, std::move(message), bench_s, std::max(0.0, ctx_.env.now_s() - started_s_ - bench_s)};
  }

  Context& ctx_;
  const store::JobRecord& job_;
  const std::string sha_;
  const bool confirm_;
  const double started_s_;
  runner::Manifest manifest_;
  store::CommitRecord commit_;
  std::optional<JobRuns> runs_;
  std::map<judge::Cell, nlohmann::json> confirm_cells_;  // cell -> the change point that asks for it
  std::optional<store::TestbedId> testbed_;
  std::optional<store::CommitRecord> previous_, pinned_;
  bool pinned_reruns_allowed_ = false;
  bool a_failed_ = false;             // a re-run of the previous commit failed: only this side grows
  std::set<store::RunId> pinned_reruns_;
  std::string keep_;                  // the build slot to keep: the previous commit's
  int ok_b_ = 0, processes_b_ = 0;    // this commit's ok runs and bench processes, every job's
  std::string failure_;               // what stopped the measuring, if anything
  std::set<store::CommitId> grown_;   // other commits this job gave more runs
};

}  // namespace

Result<JobResult> run_commit_job(Context& ctx, const store::JobRecord& job) { return CommitJob(ctx, job).run(); }

}  // namespace perfwatch::daemon
