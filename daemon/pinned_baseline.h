// The pinned baseline (runs.pinned_baseline): the commit every commit is
// also compared with, found and recorded, and measured once when it has
// fewer than runs.per_commit runs of its own (a baseline outside the watched
// history -- older than --since, a tag off the branch -- has none).
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "daemon/context.h"
#include "daemon/job_runs.h"
#include "runner/manifest.h"
#include "store/records.h"

namespace perfwatch::daemon {

// nullopt when the manifest names none, when it is `job_sha` itself, or when
// it names no commit (logged).
Result<std::optional<store::CommitRecord>> find_pinned_baseline(Context& ctx, const runner::Manifest& manifest,
                                                                const std::string& job_sha);

// Runs it up to runs.per_commit ok runs, within runs.max_per_commit processes.
Status measure_pinned_once(Context& ctx, JobRuns& runs, const runner::Manifest& manifest,
                           const store::CommitRecord& pinned, std::optional<store::TestbedId> testbed);

// The build slot to keep while `commit` is measured: the previous benchmarked
// commit's, so undecided comparisons can grow both sides; "" when none.
std::string build_to_keep(store::Database& db, store::CommitId commit, std::optional<store::TestbedId> testbed);

}  // namespace perfwatch::daemon
