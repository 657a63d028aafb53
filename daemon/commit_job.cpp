#include "daemon/commit_job.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>

#include "daemon/bands.h"
#include "daemon/bench_commit.h"
#include "daemon/change_watch.h"
#include "daemon/experiments.h"
#include "daemon/judge.h"
#include "daemon/run_values.h"
#include "store/analysis_store.h"
#include "store/history_store.h"
#include "store/job_progress_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string signed_percent(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * rel);
  return buf;
}

// Bench progress as the job's live progress, at most once a second.
class JobReporter : public BenchReporter {
 public:
  JobReporter(store::Database& db, store::JobProgress base) : db_(db), base_(std::move(base)) {}
  void stage(const std::string&) override {}
  void progress(const runner::SweepProgress& p) override {
    auto now = Clock::now();
    if (now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    store::JobProgress d = base_;
    d.step = store::JobStep::kRun;
    d.point_index = p.point_index + 1;
    d.points = p.points;
    d.point = p.point;
    d.variant = p.variant;
    d.trials = p.trials;
    d.elapsed_s = p.elapsed_s;
    (void)store::JobProgressWriter(db_).set(d);  // progress is best effort
  }

 private:
  store::Database& db_;
  store::JobProgress base_;
  Clock::time_point last_{};
};

class CommitJob {
 public:
  CommitJob(Context& ctx, const store::JobRecord& job)
      : ctx_(ctx), job_(job), bands_(ctx.db, analysis::BandPolicy{}), names_(ctx.db) {}

  Result<JobResult> run();

 private:
  Result<std::optional<JobResult>> check_commit();
  Result<std::optional<JobResult>> inherit();
  Result<JobResult> measure();
  Status judge_and_record(const store::CommitRecord& previous_or_none, bool have_previous);
  // One run (building first when the slot does not hold the build);
  // `detail` goes into the job's live progress.
  Result<BenchOutcome> run_once(const std::string& sha, store::RunKind kind, Workbench::Lease lease,
                                const std::string& purpose, store::JobProgress detail = {});
  Result<int> ok_runs_of(store::CommitId commit, std::optional<store::TestbedId>* testbed);
  Status run_pinned_rerun();
  Status measure_pinned_once();
  void progress(store::JobProgress progress);
  void notify(const RaisedFlagInfo& flag, const std::string& point_key);
  JobResult finish(store::JobState state, std::string message);

  Context& ctx_;
  const store::JobRecord& job_;
  Bands bands_;
  PointNames names_;
  Clock::time_point started_ = Clock::now();
  double bench_s_ = 0;

  std::string sha_;
  runner::Manifest manifest_;
  store::CommitRecord commit_;
  std::optional<store::TestbedId> testbed_;
  bool confirm_ = false;
  std::map<Cell, json> confirm_cells_;  // cell -> the change point that asks for it
  int target_runs_ = 0;
  int runs_done_ = 0;            // by this job, of the commit itself
  std::string failure_;          // what stopped the measuring, if anything
  std::set<store::CommitId> grown_;  // other commits this job gave more runs
  std::optional<store::CommitRecord> pinned_;
  bool pinned_usable_ = false;
  std::set<store::RunId> pinned_reruns_;
  // While growing an undecided comparison: the point keys the next run measures
  // (empty = the whole sweep). Decided points need no more GPU time.
  std::set<std::string> only_points_;
};

JobResult CommitJob::finish(store::JobState state, std::string message) {
  JobResult r;
  r.state = state;
  r.message = std::move(message);
  r.bench_s = bench_s_;
  r.daemon_s = std::max(0.0, seconds_since(started_) - bench_s_);
  return r;
}

void CommitJob::progress(store::JobProgress progress) {
  progress.job_id = job_.id;
  progress.commit = sha_;
  (void)store::JobProgressWriter(ctx_.db).set(progress);  // progress is best effort
}

Result<JobResult> CommitJob::run() {
  sha_ = job_.commit_sha;
  confirm_ = job_.options.contains("confirm");
  if (auto done = check_commit(); !done) {
    return fail(done.error());
  } else if (*done) {
    return **done;
  }
  auto manifest = manifest_for(ctx_.git, sha_, ctx_.options.manifest_path);
  if (!manifest) {
    ctx_.log.event("manifest").commit(sha_).add("status", "failed").add("message", manifest.error().to_string());
    return finish(store::JobState::kFailed, manifest.error().to_string());
  }
  manifest_ = std::move(*manifest);
  bands_.set_policy(analysis::BandPolicy{.default_rel = manifest_.default_band,
                                         .reference_runs = manifest_.runs.per_commit});
  auto id = record_commit(ctx_.db, ctx_.repo, ctx_.git, sha_, manifest_);
  if (!id) return fail(id.error());
  auto commit = store::RepoReader(ctx_.db).commit(*id);
  if (!commit) return fail(commit.error());
  commit_ = *commit;

  if (!confirm_) {
    if (auto inherited = inherit(); !inherited) {
      return fail(inherited.error());
    } else if (*inherited) {
      return **inherited;
    }
  } else {
    for (const json& c : job_.options["confirm"]) {
      if (!c.is_object()) continue;
      auto point = store::RunReader(ctx_.db).find_point(c.value("point", ""));
      if (point && *point) confirm_cells_[Cell{c.value("variant", ""), (*point)->id}] = c.value("change_point", json::object());
    }
  }
  return measure();
}

Result<std::optional<JobResult>> CommitJob::check_commit() {
  auto resolved = ctx_.git.resolve(sha_ + "^{commit}");
  if (!resolved) {
    std::string why = "commit " + sha_.substr(0, 10) + " no longer exists in the repository";
    ctx_.log.event("check").commit(sha_).add("status", "vanished").add("message", why);
    return finish(store::JobState::kSkipped, why);
  }
  if (!job_.branch.empty() && !confirm_) {
    auto head = ctx_.git.resolve("refs/heads/" + job_.branch);
    if (head) {
      auto on_branch = ctx_.git.is_ancestor(sha_, *head);
      if (on_branch && !*on_branch) {
        std::string why = "commit " + sha_.substr(0, 10) + " is no longer on branch " + job_.branch +
                          " (head " + head->substr(0, 10) + "): dropped by a force-push";
        ctx_.log.event("check").commit(sha_).add("status", "off_branch").add("message", why);
        return finish(store::JobState::kSkipped, why);
      }
    }
  }
  return std::optional<JobResult>{};
}

Result<std::optional<JobResult>> CommitJob::inherit() {
  if (commit_.parent_sha.empty()) return std::optional<JobResult>{};
  auto parent = store::RepoReader(ctx_.db).find_commit(ctx_.repo, commit_.parent_sha);
  if (!parent) return fail(parent.error());
  if (!*parent) return std::optional<JobResult>{};  // never seen: nothing to inherit, measure it
  // The parent's paths under this commit's manifest (the manifest itself may have changed).
  auto parent_hash = ctx_.git.paths_hash(commit_.parent_sha, manifest_.paths);
  if (!parent_hash) return fail(parent_hash.error());
  if (*parent_hash != commit_.paths_hash) return std::optional<JobResult>{};
  if (auto s = store::RepoWriter(ctx_.db).set_inherited_from(commit_.id, (*parent)->id); !s) return fail(s.error());
  auto updated = store::RepoReader(ctx_.db).commit(commit_.id);
  std::string from_sha = commit_.parent_sha;
  if (updated && updated->inherited_from) {
    if (auto root = store::RepoReader(ctx_.db).commit(*updated->inherited_from)) from_sha = root->sha;
  }
  std::string why = "inherits the results of " + from_sha.substr(0, 10) +
                    ": touches none of the manifest's paths (no build, no bench)";
  ctx_.log.event("inherit").commit(sha_).add("status", "ok").add("from", from_sha.substr(0, 10));
  return finish(store::JobState::kDone, why);
}

Result<int> CommitJob::ok_runs_of(store::CommitId commit, std::optional<store::TestbedId>* testbed) {
  auto runs = store::RunReader(ctx_.db).runs_of_commit(commit);
  if (!runs) return fail(runs.error());
  int n = 0;
  for (const auto& r : *runs) {
    if (r.kind != store::RunKind::kBench || r.status != store::RunStatus::kOk || !r.testbed_id) continue;
    if (testbed && *testbed && **testbed != *r.testbed_id) continue;
    if (testbed && !*testbed) *testbed = r.testbed_id;
    ++n;
  }
  return n;
}

Result<BenchOutcome> CommitJob::run_once(const std::string& sha, store::RunKind kind, Workbench::Lease lease,
                                         const std::string& purpose, store::JobProgress detail) {
  if (!lease.built) ctx_.workbench.forget(lease.dir);
  const std::string what =
      only_points_.empty() ? purpose
                           : purpose + " (" + std::to_string(only_points_.size()) + " of " +
                                 std::to_string(manifest_.points.size()) + " points)";
  detail.measuring = sha;
  detail.run_kind = kind;
  detail.purpose = what;
  detail.step = lease.built ? store::JobStep::kRun : store::JobStep::kBuild;
  progress(detail);
  BenchOptions o;
  o.repo = ctx_.options.repo;
  o.rev = sha;
  o.manifest_path = ctx_.options.manifest_path;
  o.state_dir = ctx_.options.state_dir;
  o.kind = kind;
  o.purpose = what;
  o.only_points = only_points_;
  o.job = job_.id;
  o.seed = ctx_.options.seed;
  o.skip_build = lease.built;
  o.worktree = lease.dir;
  o.stop = ctx_.stop;
  detail.job_id = job_.id;
  detail.commit = sha_;
  JobReporter reporter(ctx_.db, detail);
  auto t0 = Clock::now();
  auto out = bench_commit(ctx_.db, o, reporter);
  bench_s_ += seconds_since(t0);
  // A stop cut the run off: the job ends here and the watcher leaves it for the next start.
  if (ctx_.stopping()) return fail(Error{ErrorCode::kFailed, "job", "interrupted by a stop request"});
  if (!out) {
    ctx_.log.event("run").commit(sha).add("status", "error").add("message", out.error().to_string());
    return out;
  }
  const std::string slot = lease.dir.filename().string();
  if (out->build) {
    auto build = store::RunReader(ctx_.db).build(*out->build);
    const bool ok = out->status != store::RunStatus::kBuildFailed;
    auto e = ctx_.log.event("build");
    e.commit(sha).add("status", ok ? "ok" : (build ? std::string(store::to_string(build->status)) : "failed"));
    if (build) e.add("wall_s", build->duration_s);
    e.add("slot", slot);
    if (!ok) e.add("message", out->message);
    e.emit();
    if (ok) ctx_.workbench.remember(lease.dir, sha, manifest_.build.command);
  }
  if (out->status != store::RunStatus::kBuildFailed) {
    auto e = ctx_.log.event("run");
    e.commit(sha).add("status", std::string(store::to_string(out->status))).add("run", static_cast<long long>(out->run));
    if (kind != store::RunKind::kBench) e.add("kind", std::string(store::to_string(kind)));
    e.add("purpose", what).add("trials", static_cast<long long>(out->trials)).add("wall_s", out->wall_s);
    if (!out->message.empty()) e.add("message", out->message);
  }
  return out;
}

Status CommitJob::run_pinned_rerun() {
  if (!pinned_ || !pinned_usable_) return {};
  auto lease = ctx_.workbench.named("pinned", pinned_->sha, manifest_.build.command);
  auto out = run_once(pinned_->sha, store::RunKind::kBaselineRerun, lease,
                      "pinned baseline re-run beside " + sha_.substr(0, 10));
  if (!out) return fail(out.error());
  if (out->status == store::RunStatus::kOk) {
    pinned_reruns_.insert(out->run);
  } else {
    pinned_usable_ = false;  // its build or bench fails: compare with what there is
  }
  return {};
}

// Without re-runs beside each commit, the pinned baseline is compared through
// its own runs; a baseline outside the watched history (older than --since,
// a tag off the branch) has none until it is measured once, here.
Status CommitJob::measure_pinned_once() {
  auto have = ok_runs_of(pinned_->id, nullptr);
  if (!have) return fail(have.error());
  const int want = manifest_.runs.per_commit;
  for (int i = *have; i < want; ++i) {
    auto lease = ctx_.workbench.named("pinned", pinned_->sha, manifest_.build.command);
    auto out = run_once(pinned_->sha, store::RunKind::kBench, lease,
                        "pinned baseline: run " + std::to_string(i + 1) + " of " + std::to_string(want) +
                            " (it had too few)");
    if (!out) return fail(out.error());
    if (out->status != store::RunStatus::kOk) break;  // compared with what there is; the log says why
  }
  return {};
}

Result<JobResult> CommitJob::measure() {
  // The pinned baseline, when the manifest names one.
  if (!manifest_.runs.pinned_baseline.empty()) {
    auto pinned_sha = ctx_.git.resolve(manifest_.runs.pinned_baseline);
    if (!pinned_sha) {
      ctx_.log.event("pinned").commit(sha_).add("status", "not_found").add("message", pinned_sha.error().to_string());
    } else if (*pinned_sha != sha_) {
      auto id = record_commit(ctx_.db, ctx_.repo, ctx_.git, *pinned_sha, manifest_);
      if (!id) return fail(id.error());
      auto rec = store::RepoReader(ctx_.db).commit(*id);
      if (!rec) return fail(rec.error());
      pinned_ = *rec;
      pinned_usable_ = manifest_.runs.interleave_baseline;
      if (!pinned_usable_) {
        if (auto s = measure_pinned_once(); !s) return fail(s.error());
      }
    }
  }

  target_runs_ = confirm_ ? 0 : job_.options.value("runs", manifest_.runs.per_commit);
  auto have = ok_runs_of(commit_.id, &testbed_);
  if (!have) return fail(have.error());
  int ok_b = *have;
  const std::string short_sha = sha_.substr(0, 10);
  auto lease_b = [&](const std::string& keep) {
    return ctx_.workbench.lease(sha_, manifest_.build.command, keep.empty() ? std::vector<std::string>{}
                                                                             : std::vector<std::string>{keep});
  };
  auto run_b = [&](const std::string& keep, int index, int of) -> Result<bool> {
    if (pinned_usable_) {
      if (auto s = run_pinned_rerun(); !s) return fail(s.error());
    }
    store::JobProgress nth;
    nth.run = index;
    nth.runs_planned = of;
    auto out = run_once(sha_, store::RunKind::kBench, lease_b(keep),
                        "run " + std::to_string(index) + " of " + std::to_string(of) + " of " + short_sha, nth);
    if (!out) return fail(out.error());
    ++runs_done_;
    if (out->status != store::RunStatus::kOk) {
      failure_ = out->status == store::RunStatus::kBuildFailed
                     ? "build failed: " + out->message
                     : "run " + std::to_string(out->run) + " " + std::string(store::to_string(out->status)) +
                           (out->message.empty() ? "" : ": " + out->message);
      return false;
    }
    if (out->testbed) testbed_ = out->testbed;
    return true;
  };

  // The previous benchmarked commit's build is kept in its slot (this
  // commit builds in another), so that undecided comparisons can grow both
  // sides. Its testbed is this machine's: the one runs here were made on.
  std::string keep;
  {
    std::optional<store::TestbedId> testbed = testbed_;
    if (!testbed) {
      auto beds = store::RunReader(ctx_.db).testbeds();
      if (beds && beds->size() == 1) testbed = beds->front().id;
    }
    if (testbed) {
      auto prev = store::HistoryReader(ctx_.db).previous_measured(commit_.id, *testbed);
      if (prev && *prev) keep = (*prev)->sha;
    }
  }
  const std::string interrupted = "interrupted: the daemon was asked to stop; the next start redoes the job";
  while (ok_b < target_runs_ && failure_.empty()) {
    if (ctx_.stopping()) return finish(store::JobState::kRunning, interrupted);
    auto ok = run_b(keep, ok_b + 1, target_runs_);
    if (!ok) return fail(ok.error());
    if (*ok) ++ok_b;
  }
  if (ok_b == 0 || !testbed_) {
    std::string why = failure_.empty() ? "no run of " + short_sha + " finished ok" : failure_;
    return finish(store::JobState::kFailed, why);
  }

  // Grow while undecided (or, confirming, until the point is decided).
  const int max_runs =
      confirm_ ? (ctx_.options.confirm_max_runs > 0 ? ctx_.options.confirm_max_runs : 2 * manifest_.runs.max_per_commit)
               : manifest_.runs.max_per_commit;
  std::optional<store::CommitRecord> previous;
  for (int look = 0; look < 16 && failure_.empty(); ++look) {
    auto prev = store::HistoryReader(ctx_.db).previous_measured(commit_.id, *testbed_);
    if (!prev) return fail(prev.error());
    previous = *prev;
    if (!previous) break;
    auto a_runs = commit_runs(ctx_.db, previous->id, *testbed_);
    auto b_runs = commit_runs(ctx_.db, commit_.id, *testbed_);
    if (!a_runs) return fail(a_runs.error());
    if (!b_runs) return fail(b_runs.error());
    auto cells = compare_commits(bands_, *testbed_, previous->id, *a_runs, commit_.id, *b_runs,
                                 direction_of(manifest_), ctx_.options.policy);
    if (!cells) return fail(cells.error());
    analysis::RunBudget budget;
    budget.max_runs = std::max(max_runs, target_runs_);
    budget.max_runs_confirm = max_runs;
    budget.can_rerun_baseline = confirm_ || ctx_.workbench.has_build(previous->sha, manifest_.build.command);
    int add_a = 0, add_b = 0, undecided = 0;
    std::set<std::string> points_a, points_b;  // where each side needs more runs
    for (const auto& c : *cells) {
      analysis::RunRequest more;
      if (confirm_) {
        if (confirm_cells_.count(c.cell)) more = analysis::confirmation_runs(c.comparison, budget);
      } else {
        more = analysis::more_runs(c.comparison, budget);
      }
      if (c.comparison.verdict == analysis::ChangeVerdict::kUndecided) ++undecided;
      add_a = std::max(add_a, more.add_a);
      add_b = std::max(add_b, more.add_b);
      if (more.add_a > 0) points_a.insert(names_.key(c.cell.point));
      if (more.add_b > 0) points_b.insert(names_.key(c.cell.point));
    }
    auto describe_points = [&](const std::set<std::string>& points, int add) {
      if (add == 0) return std::string("none");
      return points.empty() ? std::string("all")
                            : std::to_string(points.size()) + "/" + std::to_string(manifest_.points.size());
    };
    // A run of every point is the same as no restriction (and says so in its purpose).
    if (points_a.size() == manifest_.points.size()) points_a.clear();
    if (points_b.size() == manifest_.points.size()) points_b.clear();
    if (add_a == 0 && add_b == 0) break;
    ctx_.log.event("more_runs")
        .commit(sha_)
        .add("against", previous->sha.substr(0, 10))
        .add("undecided", undecided)
        .add("add_against", add_a)
        .add("add_commit", add_b)
        .add("points_against", describe_points(points_a, add_a))
        .add("points_commit", describe_points(points_b, add_b));
    // A B A B: the machine's slow drift hits both sides alike.
    const int rounds = std::max(add_a, add_b);
    for (int i = 0; i < rounds && failure_.empty(); ++i) {
      if (ctx_.stopping()) return finish(store::JobState::kRunning, interrupted);
      if (i < add_a) {
        only_points_ = points_a;
        auto out = run_once(previous->sha, store::RunKind::kBench,
                            ctx_.workbench.lease(previous->sha, manifest_.build.command, {sha_}),
                            "re-run of " + previous->sha.substr(0, 10) + " beside " + short_sha);
        if (!out) return fail(out.error());
        grown_.insert(previous->id);
        if (out->status != store::RunStatus::kOk) add_a = i;  // its build or bench fails now: grow only B
      }
      if (i < add_b) {
        only_points_ = points_b;
        auto ok = run_b(previous->sha, ok_b + 1, ok_b + 1);
        if (!ok) return fail(ok.error());
        if (*ok) ++ok_b;
      }
    }
  }

  only_points_.clear();
  store::JobProgress analysing;
  analysing.step = store::JobStep::kAnalyse;
  progress(analysing);
  if (auto s = judge_and_record(previous ? *previous : store::CommitRecord{}, previous.has_value()); !s) {
    return fail(s.error());
  }
  std::string message = std::to_string(ok_b) + " ok run(s) of " + short_sha;
  if (!failure_.empty()) return finish(store::JobState::kFailed, failure_ + " (" + message + " kept and judged)");
  return finish(store::JobState::kDone, message);
}

void CommitJob::notify(const RaisedFlagInfo& f, const std::string& point_key) {
  auto e = ctx_.log.event("flag");
  e.commit(sha_)
      .add("kind", std::string(store::to_string(f.flag.kind)))
      .add("id", static_cast<long long>(f.flag.id))
      .add("variant", f.flag.variant)
      .add("point", point_key)
      .add("delta", signed_percent(f.flag.magnitude_rel))
      .add("p", f.comparison->comparison.p_value)
      .add("band", "+-" + signed_percent(f.comparison->comparison.band_rel).substr(1))
      .add("new", f.created ? "yes" : "no")
      .add("basis", f.flag.detail.value("basis", "previous"));
  e.emit();
  const bool regression = f.flag.detail.value("verdict", "") == "regression";
  if (!f.created || !regression || !ctx_.webhook) return;
  json message = {
      {"event", f.flag.kind == store::FlagKind::kChangepoint ? "changepoint_regression" : "regression"},
      {"flag_id", f.flag.id},
      {"repo", ctx_.options.repo.string()},
      {"branch", job_.branch},
      {"commit", {{"sha", commit_.sha}, {"subject", commit_.subject}, {"author", commit_.author}}},
      {"variant", f.flag.variant},
      {"point", point_key},
      {"metric", manifest_.metric.name},
      {"delta_rel", f.flag.magnitude_rel},
      {"against", {{"sha", f.flag.detail.value("against", "")}, {"basis", f.flag.detail.value("basis", "previous")}}},
      {"detail", f.flag.detail},
      {"text", "perfwatch: regression " + signed_percent(f.flag.magnitude_rel) + " " + manifest_.metric.name + " at " +
                   point_key + " (" + f.flag.variant + ") in " + commit_.sha.substr(0, 10) + " " + commit_.subject}};
  auto posted = ctx_.webhook->post(message);
  auto w = ctx_.log.event("webhook");
  w.commit(sha_).add("flag", static_cast<long long>(f.flag.id)).add("status", posted ? "ok" : "failed");
  if (!posted) w.add("message", posted.error().to_string());
}

Status CommitJob::judge_and_record(const store::CommitRecord& previous, bool have_previous) {
  const store::TestbedId testbed = *testbed_;
  const std::string& metric = manifest_.metric.name;
  const analysis::Direction direction = direction_of(manifest_);
  auto b_runs = commit_runs(ctx_.db, commit_.id, testbed);
  if (!b_runs) return fail(b_runs.error());
  if (auto s = store_commit_summaries(ctx_.db, commit_.id, testbed, metric, *b_runs); !s) return s;
  const auto b_values = b_runs->values();

  // With the previous benchmarked commit: comparisons, flags, trailer experiment.
  std::vector<CellComparison> cells;
  std::optional<CommitRuns> a_runs;
  if (have_previous) {
    auto a = commit_runs(ctx_.db, previous.id, testbed);
    if (!a) return fail(a.error());
    a_runs = std::move(*a);
    if (grown_.count(previous.id)) {
      if (auto s = store_commit_summaries(ctx_.db, previous.id, testbed, metric, *a_runs); !s) return s;
    }
    auto compared = compare_commits(bands_, testbed, previous.id, *a_runs, commit_.id, *b_runs, direction,
                                    ctx_.options.policy);
    if (!compared) return fail(compared.error());
    cells = std::move(*compared);
    if (auto s = store_comparisons(ctx_.db, commit_.id, previous.id, store::ComparisonBasis::kPrevious, testbed,
                                   metric, cells);
        !s) {
      return s;
    }
    std::map<std::string, int> verdicts;
    for (const auto& c : cells) ++verdicts[analysis::to_string(c.comparison.verdict)];
    ctx_.log.event("compare")
        .commit(sha_)
        .add("against", previous.sha.substr(0, 10))
        .add("basis", "previous")
        .add("regression", verdicts["regression"])
        .add("improvement", verdicts["improvement"])
        .add("within_noise", verdicts["within_noise"])
        .add("undecided", verdicts["undecided"]);
    auto flags = raise_flags(ctx_.db, commit_.id, testbed, previous.sha, cells, confirm_cells_);
    if (!flags) return fail(flags.error());
    for (const auto& f : *flags) notify(f, names_.key(f.flag.point_id));
    auto trailer = record_trailer_experiment(ctx_.db, manifest_, ctx_.repo, commit_, previous, testbed, cells, names_);
    if (!trailer) return fail(trailer.error());
    if (*trailer) ctx_.log.event("experiment").commit(sha_).add("id", static_cast<long long>(**trailer)).add("source", "trailer");
  }

  // With the pinned baseline: its re-runs beside this commit, or its own runs.
  if (pinned_) {
    std::optional<std::set<store::RunId>> only;
    store::RunKind kind = store::RunKind::kBench;
    if (!pinned_reruns_.empty()) {
      only = pinned_reruns_;
      kind = store::RunKind::kBaselineRerun;
    }
    auto p_runs = commit_runs(ctx_.db, pinned_->id, testbed, kind, only);
    if (!p_runs) return fail(p_runs.error());
    if (!p_runs->empty()) {
      auto compared = compare_commits(bands_, testbed, pinned_->id, *p_runs, commit_.id, *b_runs, direction,
                                      ctx_.options.policy);
      if (!compared) return fail(compared.error());
      if (auto s = store_comparisons(ctx_.db, commit_.id, pinned_->id, store::ComparisonBasis::kPinned, testbed,
                                     metric, *compared);
          !s) {
        return s;
      }
      int worse = 0;
      for (const auto& c : *compared) worse += c.comparison.verdict == analysis::ChangeVerdict::kRegression;
      ctx_.log.event("compare").commit(sha_).add("against", pinned_->sha.substr(0, 10)).add("basis", "pinned").add(
          "regression", worse);
      std::vector<store::ComparisonRecord> previous_pinned;
      if (have_previous) {
        auto stored = store::AnalysisReader(ctx_.db).comparisons_of_commit(previous.id);
        if (!stored) return fail(stored.error());
        previous_pinned = std::move(*stored);
      }
      const auto drift = pinned_drift(*compared, cells, previous_pinned);
      auto flags = raise_flags(ctx_.db, commit_.id, testbed, pinned_->sha, drift, {}, store::ComparisonBasis::kPinned);
      if (!flags) return fail(flags.error());
      for (const auto& f : *flags) notify(f, names_.key(f.flag.point_id));
    }
  }

  // Noise evidence: this commit's runs (and the previous commit's, if they
  // grew) are groups of one build; identical bench binaries make a pair.
  auto add_groups = [&](store::CommitId id, const CommitRuns& runs) -> Status {
    for (const auto& [cell, values] : runs.values()) {
      if (auto s = bands_.add_group(testbed, cell.variant, cell.point, false, commit_source(id),
                                    store::EvidenceKind::kHistory, values);
          !s) {
        return s;
      }
    }
    return {};
  };
  if (auto s = add_groups(commit_.id, *b_runs); !s) return s;
  if (a_runs && grown_.count(previous.id)) {
    if (auto s = add_groups(previous.id, *a_runs); !s) return s;
  }
  if (a_runs) {
    auto binary_of = [&](store::CommitId id) -> std::string {
      auto runs = store::RunReader(ctx_.db).runs_of_commit(id);
      if (!runs) return "";
      for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
        if (it->status != store::RunStatus::kOk) continue;
        const json& p = it->provenance;
        if (p.contains("build") && p["build"].contains("binary_hash")) return p["build"]["binary_hash"].get<std::string>();
      }
      return "";
    };
    const std::string hash = binary_of(commit_.id);
    if (!hash.empty() && hash == binary_of(previous.id)) {
      const auto a_values = a_runs->values();
      for (const auto& [cell, values] : b_values) {
        auto it = a_values.find(cell);
        if (it == a_values.end()) continue;
        if (auto s = bands_.add_unchanged_pair(testbed, cell.variant, cell.point,
                                               "pair:" + std::to_string(previous.id) + "-" + std::to_string(commit_.id),
                                               it->second, values);
            !s) {
          return s;
        }
      }
      ctx_.log.event("noise").commit(sha_).add("unchanged_pair", previous.sha.substr(0, 10)).add("binary", hash);
    }
  }
  for (const auto& [cell, values] : b_values) {
    if (auto band = bands_.publish(testbed, cell.variant, cell.point); !band) return fail(band.error());
  }

  // Variant A/B of this commit.
  auto experiments = record_variant_experiments(ctx_.db, bands_, manifest_, ctx_.repo, commit_, testbed, *b_runs,
                                                names_, ctx_.options.policy);
  if (!experiments) return fail(experiments.error());
  for (store::ExperimentId id : *experiments) {
    auto detail = store::ExperimentReader(ctx_.db).experiment(id);
    if (!detail) continue;
    ctx_.log.event("experiment")
        .commit(sha_)
        .add("id", static_cast<long long>(id))
        .add("source", "auto")
        .add("candidate", detail->experiment.candidates.empty() ? std::string()
                                                                 : detail->experiment.candidates[0].value("name", ""))
        .add("verdict", std::string(store::to_string(detail->experiment.verdict)));
  }

  // Steps that no single comparison caught.
  if (!confirm_ && have_previous) {
    std::vector<Cell> all;
    for (const auto& [cell, values] : b_values) all.push_back(cell);
    analysis::RunBudget confirm_budget;
    confirm_budget.max_runs = manifest_.runs.max_per_commit;
    confirm_budget.max_runs_confirm = ctx_.options.confirm_max_runs > 0 ? ctx_.options.confirm_max_runs
                                                                        : 2 * manifest_.runs.max_per_commit;
    auto requests = unexplained_change_points(ctx_, bands_, commit_, testbed, all, names_, direction, confirm_budget);
    if (!requests) return fail(requests.error());
    store::JobQueue queue(ctx_.db);
    std::map<std::string, store::Enqueued> queued;
    for (const auto& [sha, options] : confirm_options(*requests)) {
      store::JobRequest req;
      req.repo_id = ctx_.repo;
      req.commit_sha = sha;
      req.branch = job_.branch;
      req.kind = store::JobKind::kBench;
      req.priority = 1;  // before routine work: the step is known to be there
      req.options = options;
      req.again = true;
      auto q = queue.enqueue(req);
      if (!q) return fail(q.error());
      queued[sha] = *q;
    }
    for (const auto& r : *requests) {
      ctx_.log.event("changepoint")
          .commit(r.change_point_sha)
          .add("variant", r.cell.variant)
          .add("point", r.point_key)
          .add("p", r.change_point.p_value)
          .add("change", signed_percent(r.change_point.rel_change()))
          .add("confirm", r.sha.substr(0, 10))
          .add("job", static_cast<long long>(queued[r.sha].id))
          .add("queued", queued[r.sha].created ? "yes" : "already");
    }
  }
  return {};
}

}  // namespace

Result<JobResult> run_commit_job(Context& ctx, const store::JobRecord& job) {
  CommitJob j(ctx, job);
  return j.run();
}

}  // namespace perfwatch::daemon
