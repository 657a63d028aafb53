// Benchmarking one commit once: check it out in a worktree, build it, run the
// sweep, store everything (the commit, the build, the run with its
// provenance, variants, checks, every trial, summaries). The unit of work of
// `perfwatch bench` and of each run the daemon makes.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "common/result.h"
#include "daemon/executor.h"
#include "runner/git.h"
#include "runner/manifest.h"
#include "runner/sweep.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::daemon {

struct BenchOptions {
  std::filesystem::path repo;
  std::string rev = "HEAD";
  // The manifest to use instead of perfwatch.json in the commit (for a repo
  // you do not control).
  std::optional<std::filesystem::path> manifest_path;
  std::filesystem::path state_dir;   // worktrees/ and logs/ live here
  store::RunKind kind = store::RunKind::kBench;
  std::string purpose;
  std::optional<store::JobId> job;
  std::uint64_t seed = 0;            // 0 = the bench chooses
  bool skip_build = false;           // the worktree is already built at this commit (later runs of one job)
  // Build, and stop there when the build is ok (no run: the outcome's run is
  // 0); a failed build is stored as ever, as a run that never started.
  bool build_only = false;
  // The worktree folder to use instead of worktree_dir(state_dir, repo) (the
  // daemon's build slots, see workbench.h).
  std::optional<std::filesystem::path> worktree;
  // Only these sweep points (by key, "b8_h16_k2048_bf16"); empty = all of the
  // manifest's. The daemon's extra runs measure only the points still undecided.
  std::set<std::string> only_points;
  // Set by a stop request (SIGTERM): the build or the bench in progress is
  // ended (its process group: SIGTERM, then SIGKILL) and the run is cut off.
  const std::atomic<bool>* stop = nullptr;
  // Where the build and the bench run (executor.h); null: here, as ever.
  const Slot* slot = nullptr;
};

// What happened, stage by stage, for a person watching.
class BenchReporter {
 public:
  virtual ~BenchReporter() = default;
  virtual void stage(const std::string& what) = 0;                  // "building 3f2a9c1: kernels/scripts/build.sh ..."
  virtual void progress(const runner::SweepProgress& progress) = 0;
};

struct BenchOutcome {
  store::RepoId repo = 0;
  store::CommitId commit = 0;
  std::string sha;
  std::optional<store::BuildId> build;   // set when this call built
  store::RunId run = 0;
  std::optional<store::TestbedId> testbed;  // where the bench ran (unknown when it never said)
  store::RunStatus status = store::RunStatus::kOk;
  std::string message;               // empty when ok; for kLost, the executor's reason
  std::int64_t trials = 0;
  double wall_s = 0;
};

// Errors (kInvalidArgument for a bad repo, revision or manifest; kIo for the
// store) mean nothing was run. Failures of the build or the bench are not
// errors: they are stored and returned as the outcome's status and message.
Result<BenchOutcome> bench_commit(store::Database& db, const BenchOptions& options, BenchReporter& reporter);

// The manifest for `sha`: options.manifest_path if given, else perfwatch.json
// in the commit. Errors name the file.
Result<runner::Manifest> manifest_for(const runner::Git& git, const std::string& sha,
                                      const std::optional<std::filesystem::path>& manifest_path);

// Stores the commit's git metadata (with the Perf-* trailers and the hash of
// the manifest's paths) and returns its id.
Result<store::CommitId> record_commit(store::Database& db, store::RepoId repo, const runner::Git& git,
                                      const std::string& sha, const runner::Manifest& manifest);

// The same from what git said of the commit.
Result<store::CommitId> record_commit(store::Database& db, store::RepoId repo, const runner::CommitInfo& info,
                                      const std::string& paths_hash);

// The repo row for a checkout (by its canonical path).
Result<store::RepoId> record_repo(store::Database& db, const std::filesystem::path& repo);

// Where the persistent worktree of a repo lives under the state dir.
std::filesystem::path worktree_dir(const std::filesystem::path& state_dir, const std::filesystem::path& repo);

store::RunStatus to_store_status(runner::RunStatus status);

}  // namespace perfwatch::daemon
