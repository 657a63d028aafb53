// A history written as a git repository that `perfwatch watch` can follow:
// one commit per entry of the history, each changing truth.json (a path the
// manifest watches, so no commit inherits its parent's results), the
// manifest in the first, and a tag `pin` on the first commit.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/judging_e2e/history.h"
#include "common/result.h"
#include "schemas/manifest_defaults.h"

namespace judging_e2e {

struct RepoOptions {
  std::filesystem::path dir;        // created; must not exist
  std::filesystem::path bench;      // the synthetic bench, absolute
  std::filesystem::path run_log;    // the bench's run log (outside the repo), absolute
  std::uint64_t bench_seed = 1;
  bool pinned = false;              // runs.pinned_baseline = "pin" (the first commit)
  int per_commit = 3;
  int max_per_commit = perfwatch::schemas::kDefaultMaxRunsPerCommit;
  std::string name;                 // the manifest's name
};

struct Repo {
  std::filesystem::path dir;
  std::vector<std::string> shas;    // in history order
  nlohmann::json manifest;
};

// perfwatch.json of a history: a trivial build, the synthetic bench, 2
// variants x 3 batch sizes, a small trial policy.
nlohmann::json make_manifest(const History& history, const RepoOptions& options);

perfwatch::Result<Repo> write_repo(const History& history, const RepoOptions& options);

// 'text' quoted for /bin/sh.
std::string shell_quote(const std::string& text);

}  // namespace judging_e2e
