#include "daemon/noise.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "analysis/device_offsets.h"
#include "daemon/over_slots.h"
#include "store/run_store.h"

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

struct Spread {
  int devices = 0;                                   // distinct GPUs the ok runs ran on
  std::map<store::RunId, std::string> device_of_run;
  std::vector<analysis::DeviceOffset> offsets;
};

// Which GPU each ok run ran on (runs.device_uuid) and, over two or more,
// how far each GPU's runs sit from the others' (analysis/device_offsets.h).
Result<Spread> devices_of(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                          const std::set<store::RunId>& ok) {
  Spread out;
  auto runs = store::RunReader(db).runs_of_commit(commit);
  if (!runs) return fail(runs.error());
  std::set<std::string> devices;
  for (const auto& r : *runs) {
    if (!ok.count(r.id) || r.device_uuid.empty()) continue;
    out.device_of_run[r.id] = r.device_uuid;
    devices.insert(r.device_uuid);
  }
  out.devices = static_cast<int>(devices.size());
  if (out.devices < 2) return out;
  auto measured = commit_runs(db, commit, testbed, store::RunKind::kNoise, ok);
  if (!measured) return fail(measured.error());
  std::map<Cell, std::size_t> column;
  for (const auto& [run, cells] : measured->by_run())
    for (const auto& [cell, value] : cells) column.emplace(cell, column.size());
  std::vector<analysis::DeviceRun> table;
  for (const auto& [run, cells] : measured->by_run()) {
    auto it = out.device_of_run.find(run);
    if (it == out.device_of_run.end()) continue;
    analysis::DeviceRun r{it->second, std::vector<double>(column.size(), std::nan(""))};
    for (const auto& [cell, value] : cells) r.values[column[cell]] = value;
    table.push_back(std::move(r));
  }
  out.offsets = analysis::device_offsets(table);
  return out;
}

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
  std::set<store::RunId> ok;
  std::mutex mutex;  // the runs spread over the testbed's slots (one GPU each)
  // Run k+1 of `runs`; the first builds, alone, then the rest spread over the slots.
  auto one_run = [&](int k, store::Database& db, const Slot& slot) -> Status {
    QuietReporter reporter;
    BenchOptions o;
    o.repo = ctx.options.repo;
    o.rev = *sha;
    o.manifest_path = ctx.options.manifest_path;
    o.state_dir = ctx.options.state_dir;
    o.kind = store::RunKind::kNoise;
    o.purpose = "A/A noise calibration " + std::to_string(k + 1) + "/" + std::to_string(runs);
    o.job = job;
    o.seed = ctx.options.seed;
    o.skip_build = lease.built;
    o.worktree = lease.dir;
    o.stop = ctx.stop;
    o.slot = &slot;
    auto t0 = std::chrono::steady_clock::now();
    auto r = bench_commit(db, o, reporter);
    if (ctx.stopping()) return fail(Error{ErrorCode::kFailed, "noise", "interrupted by a stop request"});
    std::lock_guard lock(mutex);
    out.bench_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r) return fail(r.error());
    out.runs.push_back(r->run);
    if (r->build && r->status != store::RunStatus::kBuildFailed) {
      ctx.workbench.remember(lease.dir, *sha, manifest->build.command);
      lease.built = true;
    }
    auto e = ctx.log.event("noise_run");
    e.commit(*sha)
        .add("run", static_cast<long long>(r->run))
        .add("n", std::to_string(k + 1) + "/" + std::to_string(runs))
        .add("status", std::string(store::to_string(r->status)));
    if (ctx.testbed.slots.size() > 1) e.add("on", slot.label());
    e.add("wall_s", r->wall_s);
    e.emit();
    if (r->status != store::RunStatus::kOk) {
      if (out.failure.empty()) {
        out.failure = r->status == store::RunStatus::kBuildFailed
                          ? "build failed: " + r->message
                          : "run " + std::to_string(r->run) + " " + std::string(store::to_string(r->status)) + ": " +
                                r->message;
      }
      return {};
    }
    ok.insert(r->run);
    if (r->testbed) out.testbed = r->testbed;
    return {};
  };
  if (runs > 0) {
    if (auto s = one_run(0, ctx.db, *ctx.testbed.slots.front()); !s) return fail(s.error());
  }
  if (out.failure.empty() && runs > 1) {
    auto rest = [&](int k, store::Database& db, const Slot& slot) -> Status {
      {
        std::lock_guard lock(mutex);
        if (!out.failure.empty()) return {};  // a run failed: no more
      }
      return one_run(k + 1, db, slot);
    };
    if (auto s = over_slots(ctx.db, ctx.testbed.slots, runs - 1, rest); !s) return fail(s.error());
  }
  out.ok_runs = static_cast<int>(ok.size());
  if (ok.empty() || !out.testbed) return out;

  // Spread over several GPUs: one consistently off is reported and left out.
  auto spread = devices_of(ctx.db, *commit, *out.testbed, ok);
  if (!spread) return fail(spread.error());
  out.devices = spread->offsets;
  std::string note;
  if (spread->devices > 1) {
    std::set<std::string> off;
    for (const auto& d : out.devices) {
      if (!d.off) continue;
      off.insert(d.device);
      char buf[160];
      std::snprintf(buf, sizeof buf, "; %s left out: consistently %+.2f%% against the other GPUs (p = %.2g, %d runs)",
                    d.device.c_str(), 100 * d.offset_rel, d.p_value, d.runs);
      note += buf;
    }
    for (const auto& [run, device] : spread->device_of_run)
      if (off.count(device)) ok.erase(run);
    note = "; runs spread over " + std::to_string(spread->devices - static_cast<int>(off.size())) +
           " GPUs of the testbed: GPU-to-GPU variation is pooled into the band" + note;
    if (ok.empty()) return out;
  }

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
    auto band = bands.publish(*out.testbed, cell.variant, cell.point, note);
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
