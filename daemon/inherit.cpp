#include "daemon/inherit.h"

#include "daemon/env.h"
#include "store/repo_store.h"

namespace perfwatch::daemon {

Result<std::optional<std::string>> inherit_untouched(Context& ctx, const store::CommitRecord& commit,
                                                     const runner::Manifest& manifest) {
  if (commit.parent_sha.empty()) return std::optional<std::string>{};
  auto parent = store::RepoReader(ctx.db).find_commit(ctx.repo, commit.parent_sha);
  if (!parent) return fail(parent.error());
  if (!*parent) return std::optional<std::string>{};  // never seen: nothing to inherit, measure it
  auto parent_hash = ctx.env.paths_hash(commit.parent_sha, manifest.paths);  // under this commit's manifest
  if (!parent_hash) return fail(parent_hash.error());
  if (*parent_hash != commit.paths_hash) return std::optional<std::string>{};
  if (auto s = store::RepoWriter(ctx.db).set_inherited_from(commit.id, (*parent)->id); !s) return fail(s.error());
  std::string from = commit.parent_sha;
  auto updated = store::RepoReader(ctx.db).commit(commit.id);
  if (updated && updated->inherited_from) {
    if (auto root = store::RepoReader(ctx.db).commit(*updated->inherited_from)) from = root->sha;
  }
  ctx.log.event("inherit").commit(commit.sha).add("status", "ok").add("from", from.substr(0, 10));
  return std::optional<std::string>{from};
}

}  // namespace perfwatch::daemon
