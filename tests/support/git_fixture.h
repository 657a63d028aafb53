// A real git repository in a temporary directory, for tests that need
// commits: the runner's checkouts, the daemon's watching.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "tests/support/temp_dir.h"

namespace perfwatch::testing {

class GitFixture {
 public:
  GitFixture();
  const std::filesystem::path& path() const { return dir_.path(); }

  // Writes the files (path -> content, relative to the repo), commits them all
  // with `message` and returns the new commit's sha.
  std::string commit(const std::map<std::string, std::string>& files, const std::string& message);

  // The same, with exactly these bytes as the author's name and the message.
  // `git commit` repairs text that is not UTF-8 (it re-reads it as Latin-1);
  // this writes the commit object itself, as an import, another tool or an
  // old repository leaves it, so tests see what such a repo really holds.
  std::string commit_raw(const std::map<std::string, std::string>& files, const std::string& author_name,
                         const std::string& message);

  // Runs git in the repo and returns its stdout; throws on failure.
  std::string git(const std::string& args) const;

 private:
  TempDir dir_;
};

// Runs a shell command and returns its stdout; throws when it fails.
std::string shell(const std::string& command);

}  // namespace perfwatch::testing
