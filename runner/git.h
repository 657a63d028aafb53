// The git repository being watched, read through the git command line. Every
// call is read-only on the user's checkout: perfwatch builds in worktrees.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "runner/git_output.h"

namespace perfwatch::runner {

class Git {
 public:
  // REQUIRES: repo is a directory. Commands time out after timeout_s.
  explicit Git(std::filesystem::path repo, double timeout_s = 60);

  const std::filesystem::path& repo() const { return repo_; }

  // Checks that repo is a git work tree or bare repository.
  Status check() const;

  // Full sha of rev^{commit}; not_found when rev names no commit.
  Result<std::string> resolve(const std::string& rev) const;

  // The commit's fields, as parse_commit_show and parse_trailers read them
  // (text as valid UTF-8, the date range-checked).
  Result<CommitInfo> commit_info(const std::string& sha) const;

  // First-parent history from `tip` back to (not including) `stop`, oldest
  // first; the whole first-parent history when stop is empty.
  Result<std::vector<std::string>> first_parent_range(const std::string& stop, const std::string& tip) const;

  // Whether `ancestor` is an ancestor of (or equal to) `descendant`.
  Result<bool> is_ancestor(const std::string& ancestor, const std::string& descendant) const;

  // A hash of the tree entries under `paths` at `sha` (files that do not exist
  // count as absent): equal hashes mean the paths did not change.
  Result<std::string> paths_hash(const std::string& sha, const std::vector<std::string>& paths) const;

  // Contents of `path` at `sha`; not_found when the commit has no such file.
  Result<std::string> show_file(const std::string& sha, const std::string& path) const;

  // Runs git with these arguments in the repo; returns stdout. Errors carry
  // git's stderr.
  Result<std::string> run(const std::vector<std::string>& args) const;

 private:
  std::filesystem::path repo_;
  double timeout_s_;
};

}  // namespace perfwatch::runner
