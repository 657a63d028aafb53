#include "daemon/noise.h"

#include <chrono>
#include <map>
#include <set>

#include "judge/bands.h"
#include "daemon/bench_commit.h"
#include "judge/commit_runs.h"

namespace perfwatch::daemon {

// The judging vocabulary this file speaks.
using judge::Bands;
using judge::Cell;
using judge::commit_runs;
using judge::commit_source;
using judge::CommitRuns;
using judge::PointNames;


namespace {

class QuietReporter : public BenchReporter {
 public:
  void stage(const std::string&) override {}
  void progress(const runner::SweepProgress&) override {}
};

}  // namespace

Result<NoiseResult> calibrate_noise(Context& ctx, const std::string& rev, int runs, std::optional<store::JobId> job) {
  NoiseResult out;
  auto sha = ctx.git.resolve(rev);
  if (!sha) return fail(invalid_argument("--commit " + rev, sha.error().message));
  out.sha = *sha;
  auto manifest = manifest_for(ctx.git, *sha, ctx.options.manifest_path);
  if (!manifest) return fail(manifest.error());
  auto commit = record_commit(ctx.db, ctx.repo, ctx.git, *sha, *manifest);
  if (!commit) return fail(commit.error());

  Workbench::Lease lease = ctx.workbench.named("noise", *sha, manifest->build.command);
  if (!lease.built) ctx.workbench.forget(lease.dir);
  QuietReporter reporter;
  std::set<store::RunId> ok;
  for (int k = 1; k <= runs; ++k) {
    BenchOptions o;
    o.repo = ctx.options.repo;
    o.rev = *sha;
    o.manifest_path = ctx.options.manifest_path;
    o.state_dir = ctx.options.state_dir;
    o.kind = store::RunKind::kNoise;
    o.purpose = "A/A noise calibration " + std::to_string(k) + "/" + std::to_string(runs);
    o.job = job;
    o.seed = ctx.options.seed;
    o.skip_build = lease.built;
    o.worktree = lease.dir;
    o.stop = ctx.stop;
    auto t0 = std::chrono::steady_clock::now();
    auto r = bench_commit(ctx.db, o, reporter);
    if (ctx.stopping()) return fail(Error{ErrorCode::kFailed, "noise", "interrupted by a stop request"});
    out.bench_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r) return fail(r.error());
    out.runs.push_back(r->run);
    if (r->build && r->status != store::RunStatus::kBuildFailed) {
      ctx.workbench.remember(lease.dir, *sha, manifest->build.command);
      lease.built = true;
    }
    ctx.log.event("noise_run")
        .commit(*sha)
        .add("run", static_cast<long long>(r->run))
        .add("n", std::to_string(k) + "/" + std::to_string(runs))
        .add("status", std::string(store::to_string(r->status)))
        .add("wall_s", r->wall_s);
    if (r->status != store::RunStatus::kOk) {
      out.failure = r->status == store::RunStatus::kBuildFailed
                        ? "build failed: " + r->message
                        : "run " + std::to_string(r->run) + " " + std::string(store::to_string(r->status)) + ": " +
                              r->message;
      break;
    }
    ok.insert(r->run);
    if (r->testbed) out.testbed = r->testbed;
  }
  out.ok_runs = static_cast<int>(ok.size());
  if (ok.empty() || !out.testbed) return out;

  auto measured = commit_runs(ctx.db, *commit, *out.testbed, store::RunKind::kNoise, ok);
  if (!measured) return fail(measured.error());
  Bands bands(ctx.db, analysis::BandPolicy{.default_rel = manifest->default_band,
                                           .reference_runs = manifest->runs.per_commit});
  const std::string source = "aa:" + std::to_string(*ok.begin());
  const auto values = measured->values();
  for (const auto& [cell, v] : values) {
    if (auto s = bands.add_group(*out.testbed, cell.variant, cell.point, false, source, store::EvidenceKind::kAa, v);
        !s) {
      return fail(s.error());
    }
  }
  // Per-run ratios of each candidate to the baseline: the paired bands.
  const std::string base = manifest->baseline().name;
  std::map<Cell, std::vector<double>> ratios;
  for (const auto& [run, cells] : measured->by_run()) {
    for (const auto& [cell, value] : cells) {
      if (cell.variant == base) continue;
      auto b = cells.find(Cell{base, cell.point});
      if (b != cells.end()) ratios[cell].push_back(value / b->second);
    }
  }
  for (const auto& [cell, r] : ratios) {
    if (auto s = bands.add_group(*out.testbed, cell.variant, cell.point, true, source, store::EvidenceKind::kAa, r);
        !s) {
      return fail(s.error());
    }
  }
  for (const auto& [cell, v] : values) {
    auto band = bands.publish(*out.testbed, cell.variant, cell.point);
    if (!band) return fail(band.error());
    out.bands.push_back(*band);
  }
  return out;
}

Result<JobResult> run_noise_job(Context& ctx, const store::JobRecord& job) {
  auto t0 = std::chrono::steady_clock::now();
  auto r = calibrate_noise(ctx, job.commit_sha, job.options.value("runs", 10), job.id);
  JobResult out;
  if (!r) {
    if (r.error().code == ErrorCode::kIo || r.error().code == ErrorCode::kInternal) return fail(r.error());
    out.state = store::JobState::kFailed;
    out.message = r.error().to_string();
    return out;
  }
  out.bench_s = r->bench_s;
  out.daemon_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - r->bench_s;
  out.state = r->failure.empty() ? store::JobState::kDone : store::JobState::kFailed;
  out.message = std::to_string(r->ok_runs) + " A/A run(s); " + std::to_string(r->bands.size()) + " band(s) updated" +
                (r->failure.empty() ? "" : "; stopped: " + r->failure);
  return out;
}

}  // namespace perfwatch::daemon
