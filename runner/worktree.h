// A checkout of one commit in a git worktree of its own, so that perfwatch
// never touches the user's checkout.
//
// The worktree is persistent per watched repo: moved from commit to commit,
// with ignored files (build folders) kept, so builds are incremental. A
// Worktree object is the lease on it: a checkout holds an exclusive lock for
// its lifetime, so two perfwatch processes never build in the same folder;
// benches of a build already there share it (use()), several at once (the
// runs of one commit on a machine's GPUs), and keep a checkout out meanwhile.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/result.h"
#include "runner/git.h"

namespace perfwatch::runner {

class Worktree {
 public:
  // Makes `dir` a worktree of git.repo() if it is not one yet (repairing a
  // stale one), takes the lock (fails at once if another process holds it),
  // checks out `sha` detached, and removes untracked files that are not ignored.
  static Result<Worktree> checkout(const Git& git, const std::filesystem::path& dir, const std::string& sha);

  // A shared lease on `dir` as it is, which must hold `sha` checked out (a
  // build of it done there): no checkout, no clean. Fails at once if a
  // checkout holds the lock, or `dir` holds another commit.
  static Result<Worktree> use(const std::filesystem::path& dir, const std::string& sha);

  Worktree(Worktree&&) noexcept;
  Worktree& operator=(Worktree&&) noexcept;
  ~Worktree();  // releases the lock; the checkout stays for the next build

  const std::filesystem::path& root() const;
  const std::string& sha() const;

 private:
  struct Impl;
  explicit Worktree(std::unique_ptr<Impl> impl);
  static Result<std::unique_ptr<Impl>> lease(const std::filesystem::path& dir, const std::string& sha, int mode,
                                             const char* busy);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfwatch::runner
