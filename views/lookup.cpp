#include "views/lookup.h"

#include <algorithm>

#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::views {

Error field_error(Error error, std::string field) {
  if (error.code == ErrorCode::kInvalidArgument || error.code == ErrorCode::kNotFound) error.where = std::move(field);
  return error;
}

Result<store::RepoRecord> resolve_repo(store::Database& db, std::optional<store::RepoId> id) {
  store::RepoReader repos(db);
  if (id) {
    auto repo = repos.repo(*id);
    if (!repo) return fail(field_error(repo.error(), "repo"));
    return *repo;
  }
  auto all = repos.repos();
  if (!all) return fail(all.error());
  if (all->empty()) return fail(not_found("repo", "the database holds no repo yet: run perfwatch watch or bench first"));
  if (all->size() > 1) return fail(invalid_argument("repo", "required: the database holds several repos"));
  return all->front();
}

Result<Branch> resolve_branch(store::Database& db, const store::RepoRecord& repo,
                              const std::optional<std::string>& name) {
  store::RepoReader repos(db);
  if (name) {
    auto b = repos.branch(repo.id, *name);
    if (!b) return fail(field_error(b.error(), "branch"));
    if (!*b) return fail(not_found("branch", "'" + *name + "': not watched in repo " + repo.name));
    return Branch{(*b)->name, (*b)->head_sha};
  }
  auto all = repos.branches(repo.id);
  if (!all) return fail(all.error());
  if (all->empty()) return fail(not_found("branch", "repo " + repo.name + " has no watched branch yet"));
  const store::BranchRecord* pick = nullptr;
  if (all->size() == 1) pick = &all->front();
  for (const char* preferred : {"main", "master"}) {
    for (const auto& b : *all)
      if (!pick && b.name == preferred) pick = &b;
  }
  if (!pick) {
    pick = &*std::max_element(all->begin(), all->end(),
                              [](const auto& a, const auto& b) { return a.updated_at < b.updated_at; });
  }
  return Branch{pick->name, pick->head_sha};
}

Result<store::CommitRecord> resolve_commit(store::Database& db, store::RepoId repo, std::string_view sha,
                                           const std::string& field) {
  auto c = store::RepoReader(db).resolve_commit(repo, sha);
  if (!c) return fail(field_error(c.error(), field));
  return *c;
}

std::string point_label(const store::PointRecord& point) {
  if (point.batch) return "C" + std::to_string(*point.batch);
  return point.key;
}

Result<std::map<store::PointId, std::string>> point_labels(store::Database& db) {
  auto points = store::RunReader(db).points();
  if (!points) return fail(points.error());
  std::map<store::PointId, std::string> out;
  for (const auto& p : *points) out[p.id] = point_label(p);
  return out;
}

Result<store::ManifestFacts> facts_of_commit(store::Database& db, const store::CommitRecord& commit) {
  return store::RunReader(db).manifest_facts_of_commit(commit.inherited_from.value_or(commit.id));
}

Result<std::string> ShaCache::sha(std::optional<store::CommitId> id) {
  if (!id) return std::string();
  if (auto it = known_.find(*id); it != known_.end()) return it->second;
  auto c = store::RepoReader(db_).commit(*id);
  if (!c) return fail(c.error());
  known_[*id] = c->sha;
  return c->sha;
}

}  // namespace perfwatch::views
