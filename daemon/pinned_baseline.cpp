#include "daemon/pinned_baseline.h"

#include "judge/commit_runs.h"
#include "store/history_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

Result<std::optional<store::CommitRecord>> find_pinned_baseline(Context& ctx, const runner::Manifest& manifest,
                                                                const std::string& job_sha) {
  using None = std::optional<store::CommitRecord>;
  if (manifest.runs.pinned_baseline.empty()) return None{};
  auto sha = ctx.env.resolve(manifest.runs.pinned_baseline);
  if (!sha) {
    ctx.log.event("pinned").commit(job_sha).add("status", "not_found").add("message", sha.error().to_string());
    return None{};
  }
  if (*sha == job_sha) return None{};
  auto id = record_commit(ctx.db, ctx.repo, ctx.env, *sha, manifest);
  if (!id) return fail(id.error());
  auto rec = store::RepoReader(ctx.db).commit(*id);
  if (!rec) return fail(rec.error());
  return None{*rec};
}

Status measure_pinned_once(Context& ctx, JobRuns& runs, const runner::Manifest& manifest,
                           const store::CommitRecord& pinned, std::optional<store::TestbedId> testbed) {
  auto ok = ok_bench_runs(ctx.db, pinned.id, &testbed);
  auto processes = judge::bench_processes(ctx.db, pinned.id, testbed);
  if (!ok) return fail(ok.error());
  if (!processes) return fail(processes.error());
  const int want = manifest.runs.per_commit;
  for (int i = *ok, p = *processes; i < want && p < manifest.runs.max_per_commit; ++i, ++p) {
    auto out = runs.run({pinned.sha, store::RunKind::kBench,
                         ctx.workbench.named("pinned", pinned.sha, manifest.build.command),
                         "pinned baseline: run " + std::to_string(i + 1) + " of " + std::to_string(want) +
                             " (it had too few)",
                         {}, {}});
    if (!out) return fail(out.error());
    if (out->status != store::RunStatus::kOk) break;  // compared with what there is; the log says why
  }
  return {};
}

std::string build_to_keep(store::Database& db, store::CommitId commit, std::optional<store::TestbedId> testbed) {
  if (!testbed) {
    // Not measured yet: this machine's testbed, when there is just one.
    auto beds = store::RunReader(db).testbeds();
    if (beds && beds->size() == 1) testbed = beds->front().id;
  }
  if (!testbed) return "";
  auto prev = store::HistoryReader(db).previous_measured(commit, *testbed);
  return prev && *prev ? (*prev)->sha : "";
}

}  // namespace perfwatch::daemon
