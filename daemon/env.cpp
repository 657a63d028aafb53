#include "daemon/env.h"

#include <chrono>

namespace perfwatch::daemon {

Result<std::string> SystemEnv::resolve(const std::string& rev) const { return git_.resolve(rev); }

Result<bool> SystemEnv::is_ancestor(const std::string& ancestor, const std::string& descendant) const {
  return git_.is_ancestor(ancestor, descendant);
}

Result<runner::CommitInfo> SystemEnv::commit_info(const std::string& sha) const { return git_.commit_info(sha); }

Result<std::string> SystemEnv::paths_hash(const std::string& sha, const std::vector<std::string>& paths) const {
  return git_.paths_hash(sha, paths);
}

Result<runner::Manifest> SystemEnv::manifest(const std::string& sha) const {
  return manifest_for(git_, sha, manifest_path_);
}

Result<BenchOutcome> SystemEnv::bench(store::Database& db, const BenchOptions& options, BenchReporter& reporter) {
  return bench_commit(db, options, reporter);
}

double SystemEnv::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Result<store::CommitId> record_commit(store::Database& db, store::RepoId repo, const Env& env, const std::string& sha,
                                      const runner::Manifest& manifest) {
  auto info = env.commit_info(sha);
  if (!info) return fail(info.error());
  auto hash = env.paths_hash(sha, manifest.paths);
  if (!hash) return fail(hash.error());
  return record_commit(db, repo, *info, *hash);
}

}  // namespace perfwatch::daemon
