// The daemon's outside world behind one small port, as LevelDB's Env is for
// its storage: the watched repository (git, read-only), building and running
// a bench on a commit, and the clock. The job loop (commit_job.h) reaches
// the world only through it, so its tests run it in-process against a fake
// history and a fake bench (tests/daemon/fake_env.h) with no git and no
// child process, and the judging and the run plan are tested directly.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "daemon/bench_commit.h"
#include "runner/git.h"
#include "runner/manifest.h"
#include "store/database.h"

namespace perfwatch::daemon {

class Env {
 public:
  virtual ~Env() = default;

  // Git, read-only (runner/git.h says what each returns).
  virtual Result<std::string> resolve(const std::string& rev) const = 0;
  virtual Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) const = 0;
  virtual Result<runner::CommitInfo> commit_info(const std::string& sha) const = 0;
  virtual Result<std::string> paths_hash(const std::string& sha, const std::vector<std::string>& paths) const = 0;

  // The manifest that applies to `sha` (the --manifest file when given, else
  // its perfwatch.json); errors name the file.
  virtual Result<runner::Manifest> manifest(const std::string& sha) const = 0;

  // One run of a commit: checkout, build (unless options.skip_build), the
  // bench, everything stored (bench_commit.h's contract).
  virtual Result<BenchOutcome> bench(store::Database& db, const BenchOptions& options, BenchReporter& reporter) = 0;

  // Seconds on a monotonic clock.
  virtual double now_s() const = 0;
};

// The real world: git's command line, child processes, the steady clock.
class SystemEnv final : public Env {
 public:
  SystemEnv(std::filesystem::path repo, std::optional<std::filesystem::path> manifest_path)
      : git_(std::move(repo)), manifest_path_(std::move(manifest_path)) {}

  const runner::Git& git() const { return git_; }

  Result<std::string> resolve(const std::string& rev) const override;
  Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) const override;
  Result<runner::CommitInfo> commit_info(const std::string& sha) const override;
  Result<std::string> paths_hash(const std::string& sha, const std::vector<std::string>& paths) const override;
  Result<runner::Manifest> manifest(const std::string& sha) const override;
  Result<BenchOutcome> bench(store::Database& db, const BenchOptions& options, BenchReporter& reporter) override;
  double now_s() const override;

 private:
  runner::Git git_;
  std::optional<std::filesystem::path> manifest_path_;
};

// Stores the commit's git metadata as the env reports it and returns its id.
Result<store::CommitId> record_commit(store::Database& db, store::RepoId repo, const Env& env, const std::string& sha,
                                      const runner::Manifest& manifest);

}  // namespace perfwatch::daemon
