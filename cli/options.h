// Options every subcommand shares, and the exit codes they use.
#pragma once

#include <filesystem>
#include <string>

namespace perfwatch::cli {

struct GlobalOptions {
  std::string db = ".perfwatch/perfwatch.db";
  std::string state_dir;  // default: <db>.work
  std::filesystem::path state_dir_path() const {
    return state_dir.empty() ? std::filesystem::path(db + ".work") : std::filesystem::path(state_dir);
  }
};

// Exit codes, as README.md documents them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;    // the bench crashed, hung, broke the protocol or failed
inline constexpr int kExitBadInput = 2;     // bad flags, repo, revision or manifest
inline constexpr int kExitBuildFailed = 3;
inline constexpr int kExitStoreError = 4;   // the database could not be opened or written
inline constexpr int kExitInternal = 70;    // a bug: an exception nothing expected (sysexits' EX_SOFTWARE)

}  // namespace perfwatch::cli
