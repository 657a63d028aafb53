#include "runner/worktree.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace perfwatch::runner {

namespace fs = std::filesystem;

struct Worktree::Impl {
  fs::path root;
  std::string sha;
  int lock_fd = -1;
  ~Impl() {
    if (lock_fd >= 0) ::close(lock_fd);  // closing releases the flock
  }
};

Worktree::Worktree(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Worktree::Worktree(Worktree&&) noexcept = default;
Worktree& Worktree::operator=(Worktree&&) noexcept = default;
Worktree::~Worktree() = default;

const fs::path& Worktree::root() const { return impl_->root; }
const std::string& Worktree::sha() const { return impl_->sha; }

// The lease's lock on <dir>.lock, taken at once or not at all: LOCK_EX for a
// checkout, LOCK_SH for benches sharing a build.
Result<std::unique_ptr<Worktree::Impl>> Worktree::lease(const fs::path& dir, const std::string& sha, int mode,
                                                         const char* busy) {
  auto impl = std::make_unique<Impl>();
  impl->root = dir;
  impl->sha = sha;
  fs::path lock_path = dir.string() + ".lock";
  impl->lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (impl->lock_fd < 0) return fail(io_error(lock_path.string(), std::strerror(errno)));
  if (::flock(impl->lock_fd, mode | LOCK_NB) != 0) return fail(Error{ErrorCode::kFailed, dir.string(), busy});
  return impl;
}

Result<Worktree> Worktree::checkout(const Git& git, const fs::path& dir_in, const std::string& sha) {
  std::error_code ec;
  fs::path dir = fs::absolute(dir_in, ec);
  fs::create_directories(dir.parent_path(), ec);
  if (ec) return fail(io_error(dir.parent_path().string(), "cannot create: " + ec.message()));

  auto locked = lease(dir, sha, LOCK_EX, "another perfwatch process is using this worktree");
  if (!locked) return fail(locked.error());
  auto impl = std::move(*locked);

  Git tree(dir, 600);
  bool usable = fs::exists(dir / ".git", ec) && tree.run({"rev-parse", "--is-inside-work-tree"}).has_value();
  if (!usable) {
    // A folder left by a crash, or a worktree whose registration was pruned.
    fs::remove_all(dir, ec);
    (void)git.run({"worktree", "prune"});
    auto added = git.run({"worktree", "add", "--detach", "--force", dir.string(), sha});
    if (!added) return fail(added.error());
  } else {
    auto moved = tree.run({"checkout", "--detach", "--force", sha});
    if (!moved) return fail(moved.error());
  }
  // Untracked files from an earlier commit could change the build; ignored
  // ones (build folders) stay so the next build is incremental.
  auto cleaned = tree.run({"clean", "-fdq"});
  if (!cleaned) return fail(cleaned.error());
  auto head = tree.run({"rev-parse", "HEAD"});
  if (!head) return fail(head.error());
  if (head->rfind(sha, 0) != 0) {
    return fail(Error{ErrorCode::kInternal, dir.string(), "checked out " + *head + " instead of " + sha});
  }
  return Worktree(std::move(impl));
}

Result<Worktree> Worktree::use(const fs::path& dir_in, const std::string& sha) {
  std::error_code ec;
  fs::path dir = fs::absolute(dir_in, ec);
  auto locked = lease(dir, sha, LOCK_SH, "another perfwatch process is checking out or building here");
  if (!locked) return fail(locked.error());
  auto impl = std::move(*locked);
  auto head = Git(dir, 60).run({"rev-parse", "HEAD"});
  if (!head) return fail(head.error());
  if (head->rfind(sha, 0) != 0) {
    return fail(Error{ErrorCode::kInternal, dir.string(), "holds " + *head + ", not " + sha + ": build it first"});
  }
  return Worktree(std::move(impl));
}

}  // namespace perfwatch::runner
