// The daemon's build folders: a few persistent worktrees ("slots") of the
// watched repo, each remembering the commit it last built successfully.
// So the later runs of one commit skip the build, the previous commit's
// build stays at hand for A B A B re-runs, and moving a slot to the next
// commit rebuilds only what changed (the build folder is ignored by git and
// survives the checkout).
//
// A slot's memory is a small file next to it ("<slot>.built": the sha and
// the build command), written only after a build succeeded and removed
// before a build starts, so a build cut off by a crash is never trusted.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace perfwatch::daemon {

class Workbench {
 public:
  // Slots live under <state_dir>/worktrees/, named after the repo. `rotating`
  // slots (at least 1) are shared by the commits; named ones ("pinned",
  // "noise") are kept for one purpose.
  Workbench(std::filesystem::path state_dir, std::filesystem::path repo, int rotating = 2);

  struct Lease {
    std::filesystem::path dir;  // the worktree folder to use
    bool built = false;         // it holds a good build of the commit: skip the build
  };

  // Where to run `sha`: a rotating slot that holds its build; else the least
  // recently built slot holding another build that is not in `keep` (the
  // builds still wanted, e.g. the previous commit's), so the build is
  // incremental; else an empty slot; else the first. Slots in `taken` are
  // promised to another commit of the same batch of runs (leases are taken
  // before any of the batch's builds, so nothing on disk says so yet): they
  // are not chosen for a build, lest the two builds overwrite each other.
  Lease lease(const std::string& sha, const std::string& build_command, const std::vector<std::string>& keep = {},
              const std::vector<std::filesystem::path>& taken = {});

  // The named slot, and whether it holds a good build of `sha`.
  Lease named(const std::string& name, const std::string& sha, const std::string& build_command);

  // Whether some rotating slot holds a good build of `sha`.
  bool has_build(const std::string& sha, const std::string& build_command) const;

  // Call before building in `dir` (forget) and after a build there succeeded (remember).
  void forget(const std::filesystem::path& dir);
  void remember(const std::filesystem::path& dir, const std::string& sha, const std::string& build_command);

 private:
  struct Memory {
    std::string sha;
    std::string command;
  };
  static std::optional<Memory> read_memory(const std::filesystem::path& dir);
  static std::filesystem::path memory_path(const std::filesystem::path& dir);
  std::filesystem::path base_;
  int rotating_;
};

}  // namespace perfwatch::daemon
