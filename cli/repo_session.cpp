#include "cli/repo_session.h"

#include <filesystem>

#include "daemon/bench_commit.h"

namespace perfwatch::cli {

Result<std::unique_ptr<RepoSession>> RepoSession::open(store::Database& db, const GlobalOptions& global,
                                                       const std::string& repo_path, const std::string& manifest) {
  std::unique_ptr<RepoSession> s(new RepoSession());
  s->options_.repo = std::filesystem::absolute(repo_path);
  if (!manifest.empty()) s->options_.manifest_path = std::filesystem::absolute(manifest);
  s->options_.state_dir = std::filesystem::absolute(global.state_dir_path());
  auto repo = daemon::record_repo(db, s->options_.repo);
  if (!repo) return fail(repo.error());
  s->context_.emplace(db, s->log_, s->options_, *repo);
  if (auto ok = s->context_->git.check(); !ok) return fail(ok.error());
  return s;
}

}  // namespace perfwatch::cli
