// The daemon's context for one CLI command on one repo (`noise`,
// `experiment add`): the options and the event log it refers to, kept alive
// together, since daemon::Context holds references to both.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cli/options.h"
#include "common/result.h"
#include "daemon/context.h"
#include "store/database.h"

namespace perfwatch::cli {

class RepoSession {
 public:
  // Records the repo of `repo_path` and checks that git can read it.
  // `manifest` (may be empty) replaces perfwatch.json in each commit.
  static Result<std::unique_ptr<RepoSession>> open(store::Database& db, const GlobalOptions& global,
                                                   const std::string& repo_path, const std::string& manifest);

  daemon::Context& context() { return *context_; }

  RepoSession(const RepoSession&) = delete;
  RepoSession& operator=(const RepoSession&) = delete;

 private:
  RepoSession() = default;

  daemon::WatchOptions options_;
  daemon::EventLog log_;
  std::optional<daemon::Context> context_;
};

}  // namespace perfwatch::cli
