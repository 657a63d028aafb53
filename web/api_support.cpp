#include "web/api_support.h"

namespace perfwatch::web {

Expect<store::ReadPool::Lease> lease(store::ReadPool& pool) {
  auto l = pool.lease();
  if (!l) return std::unexpected(from_store(l.error()));
  return std::move(*l);
}

ApiError from_view(const Error& error) {
  const bool about_a_field = error.code == ErrorCode::kInvalidArgument || error.code == ErrorCode::kNotFound;
  return from_store(error, about_a_field ? error.where : "");
}

Expect<store::RepoRecord> resolve_repo(store::Database& db, QueryParams& q) {
  auto id = q.id("repo");
  if (!q.ok()) return std::unexpected(q.error());
  auto repo = views::resolve_repo(db, id);
  if (!repo) return std::unexpected(from_view(repo.error()));
  return *repo;
}

Expect<views::Branch> resolve_branch(store::Database& db, const store::RepoRecord& repo, QueryParams& q) {
  auto name = q.name("branch");
  if (!q.ok()) return std::unexpected(q.error());
  auto branch = views::resolve_branch(db, repo, name);
  if (!branch) return std::unexpected(from_view(branch.error()));
  return *branch;
}

Expect<store::CommitRecord> resolve_commit(store::Database& db, store::RepoId repo, const std::string& sha,
                                           const std::string& field) {
  auto c = views::resolve_commit(db, repo, sha, field);
  if (!c) return std::unexpected(from_view(c.error()));
  return *c;
}

Status Writer::with(const std::function<Status(store::Database&)>& write) {
  std::lock_guard lock(mutex_);
  if (!db_) {
    auto db = store::Database::open(path_);
    if (!db) return fail(db.error());
    db_.emplace(std::move(*db));
  }
  return write(*db_);
}

}  // namespace perfwatch::web
