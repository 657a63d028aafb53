// An in-process world for the commit job (daemon/env.h): a linear history
// of commits held in memory instead of git, and a bench that writes a run
// straight into the store at each commit's true values times a lognormal
// run factor, instead of building and running anything. It counts the bench
// processes it was asked for, per commit, so the run budget can be checked.
// Its builds are stored and fill the worktree folder they were asked in, and
// a run that skips the build fails, as the real one does, unless its folder
// holds that commit: a job that lets two commits share a folder is caught.
#pragma once

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "daemon/env.h"
#include "store/records.h"
#include "tests/judge/synthetic_history.h"

namespace perfwatch::daemon::testing {

class FakeEnv final : public Env {
 public:
  // `manifest`: what every commit's perfwatch.json says.
  FakeEnv(runner::Manifest manifest, double noise, std::uint64_t seed = 1);

  // A commit on the branch (parent: the last added) whose cells run at `value`.
  // `touches_paths` false: it changes none of the manifest's paths.
  std::string add_commit(judge::testing::TrueValue value, bool touches_paths = true, const std::string& subject = "");
  const std::vector<std::string>& shas() const { return order_; }
  int bench_calls(const std::string& sha) const;

  Result<std::string> resolve(const std::string& rev) const override;
  Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) const override;
  Result<runner::CommitInfo> commit_info(const std::string& sha) const override;
  Result<std::string> paths_hash(const std::string& sha, const std::vector<std::string>& paths) const override;
  Result<runner::Manifest> manifest(const std::string& sha) const override;
  Result<BenchOutcome> bench(store::Database& db, const BenchOptions& options, BenchReporter& reporter) override;
  double now_s() const override { return clock_s_ += 0.001; }

 private:
  struct FakeCommit {
    runner::CommitInfo info;
    std::string tree;
    judge::testing::TrueValue value;
  };
  runner::Manifest manifest_;
  double noise_;
  std::mt19937_64 rng_;
  std::map<std::string, FakeCommit> commits_;
  std::vector<std::string> order_;
  std::map<std::string, int> calls_;
  std::map<std::filesystem::path, std::string> folders_;  // worktree folder -> the commit built there
  mutable double clock_s_ = 0;
};

}  // namespace perfwatch::daemon::testing
