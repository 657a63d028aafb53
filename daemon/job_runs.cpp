#include "daemon/job_runs.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "judge/commit_runs.h"
#include "judge/judge_commit.h"
#include "store/job_progress_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

namespace {

// Bench progress as the job's live progress, at most once a second.
class JobReporter : public BenchReporter {
 public:
  JobReporter(store::Database& db, const Env& env, store::JobProgress base)
      : db_(db), env_(env), base_(std::move(base)) {}
  void stage(const std::string&) override {}
  void progress(const runner::SweepProgress& p) override {
    const double now = env_.now_s();
    if (now - last_s_ < 1.0) return;
    last_s_ = now;
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
  const Env& env_;
  store::JobProgress base_;
  double last_s_ = -1e300;
};

}  // namespace

namespace {

void set_progress(store::Database& db, store::JobProgress progress) {
  (void)store::JobProgressWriter(db).set(progress);  // progress is best effort
}

}  // namespace

void JobRuns::progress(store::JobProgress progress) {
  progress.job_id = job_.id;
  progress.commit = job_sha_;
  set_progress(ctx_.db, std::move(progress));
}

Result<BenchOutcome> JobRuns::run(RunAsk ask) { return run_on(ctx_.db, *ctx_.testbed.slots.front(), std::move(ask), bench_s_); }

Result<BenchOutcome> JobRuns::run_on(store::Database& db, const Slot& slot, RunAsk ask, double& bench_s,
                                     bool build_only) {
  for (int lost = 0;; ++lost) {
    auto out = run_once(db, slot, ask, bench_s, build_only);
    if (!out || out->status != store::RunStatus::kLost || lost >= ctx_.testbed.max_lost) return out;
    // Lost by the executor, not failed by the commit: the run is kept with
    // the executor's reason and done again (a build done before it stands).
    ctx_.log.event("requeue")
        .commit(ask.sha)
        .add("run", static_cast<long long>(out->run))
        .add("slot", slot.label())
        .add("lost", static_cast<long long>(lost + 1))
        .add("of", static_cast<long long>(ctx_.testbed.max_lost))
        .add("message", out->message);
    if (out->build) {
      // A build done before the bench was lost stands; a lost build does not.
      auto build = store::RunReader(db).build(*out->build);
      if (build && build->status == store::BuildStatus::kOk) ask.lease.built = true;
    }
  }
}

Result<BenchOutcome> JobRuns::run_once(store::Database& db, const Slot& slot, const RunAsk& ask, double& bench_s,
                                       bool build_only) {
  if (!ask.lease.built) ctx_.workbench.forget(ask.lease.dir);
  const std::string what = ask.only_points.empty()
                               ? ask.purpose
                               : ask.purpose + " (" + std::to_string(ask.only_points.size()) + " of " +
                                     std::to_string(manifest_.points.size()) + " points)";
  store::JobProgress detail = ask.detail;
  detail.job_id = job_.id;
  detail.commit = job_sha_;
  detail.measuring = ask.sha;
  detail.run_kind = ask.kind;
  detail.purpose = what;
  detail.step = ask.lease.built ? store::JobStep::kRun : store::JobStep::kBuild;
  set_progress(db, detail);

  BenchOptions o;
  o.repo = ctx_.options.repo;
  o.rev = ask.sha;
  o.manifest_path = ctx_.options.manifest_path;
  o.state_dir = ctx_.options.state_dir;
  o.kind = ask.kind;
  o.purpose = what;
  o.only_points = ask.only_points;
  o.job = job_.id;
  o.seed = ctx_.options.seed;
  o.skip_build = ask.lease.built;
  o.worktree = ask.lease.dir;
  o.stop = ctx_.stop;
  o.slot = &slot;
  o.build_only = build_only;
  JobReporter reporter(db, ctx_.env, detail);
  const double t0 = ctx_.env.now_s();
  auto out = ctx_.env.bench(db, o, reporter);
  bench_s += ctx_.env.now_s() - t0;
  // A stop cut the run off: the job ends here and the watcher leaves it for the next start.
  if (ctx_.stopping()) return fail(Error{ErrorCode::kFailed, "job", "interrupted by a stop request"});
  if (!out) {
    ctx_.log.event("run").commit(ask.sha).add("status", "error").add("message", out.error().to_string());
    return out;
  }

  const std::string build_slot = ask.lease.dir.filename().string();
  if (out->build) {
    auto build = store::RunReader(db).build(*out->build);
    const bool ok = out->status != store::RunStatus::kBuildFailed;
    auto e = ctx_.log.event("build");
    e.commit(ask.sha).add("status", ok ? "ok" : (build ? std::string(store::to_string(build->status)) : "failed"));
    if (build) e.add("wall_s", build->duration_s);
    e.add("slot", build_slot);
    if (!ok) e.add("message", out->message);
    e.emit();
    if (ok) ctx_.workbench.remember(ask.lease.dir, ask.sha, manifest_.build.command);
  }
  if (out->status != store::RunStatus::kBuildFailed && out->run != 0) {
    auto e = ctx_.log.event("run");
    e.commit(ask.sha)
        .add("status", std::string(store::to_string(out->status)))
        .add("run", static_cast<long long>(out->run));
    if (ask.kind != store::RunKind::kBench) e.add("kind", std::string(store::to_string(ask.kind)));
    if (slots() > 1 || !ctx_.testbed.name.empty()) e.add("on", slot.label());
    e.add("purpose", what).add("trials", static_cast<long long>(out->trials)).add("wall_s", out->wall_s);
    if (!out->message.empty()) e.add("message", out->message);
  }
  return out;
}

namespace {

// Later asks of the folder and commit that `ask` just built skip the build;
// later asks of another commit in that folder must build again (its build
// there is gone).
void built_for_later(std::vector<RunAsk>& asks, std::size_t from, const RunAsk& ask) {
  for (std::size_t j = from; j < asks.size(); ++j)
    if (asks[j].lease.dir == ask.lease.dir) asks[j].lease.built = asks[j].sha == ask.sha;
}

bool built_now(const BenchOutcome& out) { return out.build && out.status != store::RunStatus::kBuildFailed; }

}  // namespace

Status JobRuns::run_all(std::vector<RunAsk> asks, const Skip& skip, const Done& done) {
  // Builds first and runs in parallel needs a folder for each commit; where
  // two commits share one (a single rotating folder), they take turns.
  bool shared_folder = false;
  for (std::size_t i = 0; i < asks.size() && !shared_folder; ++i)
    for (std::size_t j = i + 1; j < asks.size() && !shared_folder; ++j)
      shared_folder = asks[i].lease.dir == asks[j].lease.dir && asks[i].sha != asks[j].sha;
  if (slots() <= 1 || asks.size() <= 1 || shared_folder) {
    for (std::size_t i = 0; i < asks.size(); ++i) {
      if (skip && skip(asks[i])) continue;
      auto out = run(asks[i]);
      if (!out) return fail(out.error());
      if (built_now(*out)) built_for_later(asks, i + 1, asks[i]);
      if (auto s = done(asks[i], *out); !s) return s;
    }
    return {};
  }

  // The builds, one at a time, before the runs spread over the slots.
  std::vector<bool> taken(asks.size(), false);
  for (std::size_t i = 0; i < asks.size(); ++i) {
    if (asks[i].lease.built || taken[i] || (skip && skip(asks[i]))) continue;
    auto built = run_on(ctx_.db, *ctx_.testbed.slots.front(), asks[i], bench_s_, /*build_only=*/true);
    if (!built) return fail(built.error());
    if (built->status == store::RunStatus::kOk) {
      built_for_later(asks, i, asks[i]);
      continue;
    }
    // The build failed (or was stopped): that is the outcome of the folder's first ask.
    for (std::size_t j = i + 1; j < asks.size(); ++j)
      if (asks[j].lease.dir == asks[i].lease.dir && asks[j].sha == asks[i].sha) taken[j] = true;
    taken[i] = true;
    if (auto s = done(asks[i], *built); !s) return s;
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::set<std::filesystem::path> building;  // folders a build runs in: their other asks wait
  Status first_error;
  // Under the lock: the next ask to start, or nullopt when none can start now.
  auto next = [&]() -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < asks.size(); ++i) {
      if (taken[i] || building.count(asks[i].lease.dir)) continue;
      taken[i] = true;
      if (!first_error || (skip && skip(asks[i]))) continue;
      if (!asks[i].lease.built) building.insert(asks[i].lease.dir);
      return i;
    }
    return std::nullopt;
  };
  auto all_taken = [&] { return std::find(taken.begin(), taken.end(), false) == taken.end(); };

  auto work = [&](const Slot& slot) {
    auto db = store::Database::open(ctx_.db.path());
    std::unique_lock lock(mutex);
    if (!db) {
      if (first_error) first_error = fail(db.error());
      changed.notify_all();
      return;
    }
    for (;;) {
      std::optional<std::size_t> i;
      changed.wait(lock, [&] { return (i = next()) || all_taken(); });
      if (!i) return;
      RunAsk ask = asks[*i];
      lock.unlock();
      double bench_s = 0;
      auto out = run_on(*db, slot, ask, bench_s);
      lock.lock();
      bench_s_ += bench_s;
      if (!ask.lease.built) building.erase(ask.lease.dir);
      if (!out) {
        if (first_error) first_error = fail(out.error());
      } else {
        if (built_now(*out)) built_for_later(asks, *i + 1, ask);
        if (auto s = done(ask, *out); !s && first_error) first_error = s;
      }
      changed.notify_all();
    }
  };
  {
    std::vector<std::jthread> workers;
    const std::size_t n = std::min(asks.size(), ctx_.testbed.slots.size());
    for (std::size_t k = 0; k < n; ++k) workers.emplace_back(work, std::cref(*ctx_.testbed.slots[k]));
  }
  return first_error;
}

Result<int> ok_bench_runs(store::Database& db, store::CommitId commit, std::optional<store::TestbedId>* testbed) {
  auto runs = store::RunReader(db).runs_of_commit(commit);
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

Result<std::optional<store::TestbedId>> known_testbed(store::Database& db, const ExecutorTestbed& testbed) {
  if (testbed.name.empty()) return std::optional<store::TestbedId>{};
  auto beds = store::RunReader(db).testbeds();
  if (!beds) return fail(beds.error());
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  for (const auto& b : *beds) {
    if (b.name == testbed.name || (b.device_name == testbed.name && b.hostname == host))
      return std::optional<store::TestbedId>{b.id};
  }
  return std::optional<store::TestbedId>{};
}

std::set<std::string> point_keys(store::Database& db, const runner::Manifest& manifest,
                                 const std::set<store::PointId>& points) {
  std::set<std::string> out;
  judge::PointNames names(db);
  for (store::PointId p : points) out.insert(names.key(p));
  if (out.size() == manifest.points.size()) out.clear();
  return out;
}

std::string describe_points(const runner::Manifest& manifest, const std::set<std::string>& points, int runs) {
  if (runs == 0) return "none";
  return points.empty() ? "all" : std::to_string(points.size()) + "/" + std::to_string(manifest.points.size());
}

Result<judge::RunPlan> plan_more_runs(Context& ctx, const runner::Manifest& manifest, store::TestbedId testbed,
                                      const store::CommitRecord& previous, store::CommitId commit, int processes_b,
                                      bool confirm, const std::map<judge::Cell, nlohmann::json>& confirm_cells) {
  auto cells = judge::look(ctx.db, manifest, testbed, previous.id, commit, ctx.options.policy);
  auto processes_a = judge::bench_processes(ctx.db, previous.id, testbed);
  if (!cells) return fail(cells.error());
  if (!processes_a) return fail(processes_a.error());
  std::vector<judge::CellLook> looks;
  for (const auto& c : *cells) looks.push_back({c.cell, c.comparison});
  judge::PlanRequest request{looks, {}, {}, confirm, {}, 2.0};
  for (const auto& [cell, cp] : confirm_cells) request.confirm_cells.insert(cell);
  request.a = {*processes_a, manifest.runs.max_per_commit,
               confirm || ctx.workbench.has_build(previous.sha, manifest.build.command)};
  request.b = {processes_b, manifest.runs.max_per_commit, true};
  return judge::plan_runs(request);
}

void log_more_runs(Context& ctx, const runner::Manifest& manifest, const std::string& sha,
                   const std::string& against_sha, const judge::RunPlan& plan, const std::set<std::string>& points_a,
                   const std::set<std::string>& points_b) {
  ctx.log.event("more_runs")
      .commit(sha)
      .add("against", against_sha.substr(0, 10))
      .add("undecided", plan.undecided)
      .add("add_against", plan.a.runs)
      .add("add_commit", plan.b.runs)
      .add("points_against", describe_points(manifest, points_a, plan.a.runs))
      .add("points_commit", describe_points(manifest, points_b, plan.b.runs));
}

std::string describe_failure(const BenchOutcome& out) {
  if (out.status == store::RunStatus::kBuildFailed) return "build failed: " + out.message;
  return "run " + std::to_string(out.run) + " " + std::string(store::to_string(out.status)) +
         (out.message.empty() ? "" : ": " + out.message);
}

}  // namespace perfwatch::daemon
