#include "web/api_support.h"

#include <algorithm>

#include "store/repo_store.h"
#include "store/run_store.h"
#include "web/json_views.h"

namespace perfwatch::web {

Expect<store::ReadPool::Lease> lease(store::ReadPool& pool) {
  auto l = pool.lease();
  if (!l) return std::unexpected(from_store(l.error()));
  return std::move(*l);
}

Expect<store::RepoRecord> resolve_repo(store::Database& db, QueryParams& q) {
  auto id = q.id("repo");
  if (!q.ok()) return std::unexpected(q.error());
  store::RepoReader repos(db);
  if (id) {
    auto repo = repos.repo(*id);
    if (!repo) return std::unexpected(from_store(repo.error(), "repo"));
    return *repo;
  }
  auto all = repos.repos();
  if (!all) return std::unexpected(from_store(all.error()));
  if (all->empty()) return std::unexpected(not_found("repo", "the database holds no repo yet"));
  if (all->size() > 1) return std::unexpected(bad_parameter("repo", "required: the database holds several repos"));
  return all->front();
}

Expect<Branch> resolve_branch(store::Database& db, const store::RepoRecord& repo, QueryParams& q) {
  auto name = q.name("branch");
  if (!q.ok()) return std::unexpected(q.error());
  store::RepoReader repos(db);
  if (name) {
    auto b = repos.branch(repo.id, *name);
    if (!b) return std::unexpected(from_store(b.error(), "branch"));
    if (!*b) return std::unexpected(not_found("branch", "'" + *name + "': not watched in repo " + repo.name));
    return Branch{(*b)->name, (*b)->head_sha};
  }
  auto all = repos.branches(repo.id);
  if (!all) return std::unexpected(from_store(all.error()));
  if (all->empty()) return std::unexpected(not_found("branch", "repo " + repo.name + " has no watched branch yet"));
  const store::BranchRecord* pick = nullptr;
  for (const char* preferred : {"main", "master"}) {
    for (const auto& b : *all)
      if (!pick && b.name == preferred) pick = &b;
  }
  if (all->size() == 1) pick = &all->front();
  if (!pick) {
    pick = &*std::max_element(all->begin(), all->end(),
                              [](const auto& a, const auto& b) { return a.updated_at < b.updated_at; });
  }
  return Branch{pick->name, pick->head_sha};
}

Expect<store::CommitRecord> resolve_commit(store::Database& db, store::RepoId repo, const std::string& sha,
                                           const std::string& field) {
  auto c = store::RepoReader(db).resolve_commit(repo, sha);
  if (!c) return std::unexpected(from_store(c.error(), field));
  return *c;
}

MetricFacts metric_facts(const nlohmann::json& manifest) {
  MetricFacts f;
  if (!manifest.is_object()) return f;
  if (auto m = manifest.find("metric"); m != manifest.end() && m->is_object()) {
    if (auto n = m->find("name"); n != m->end() && n->is_string()) f.metric = n->get<std::string>();
    if (auto d = m->find("direction"); d != m->end() && d->is_string())
      f.lower_is_better = d->get<std::string>() != "higher_is_better";
    else
      f.lower_is_better = f.metric == "time_us";
  }
  if (auto n = manifest.find("noise"); n != manifest.end() && n->is_object()) {
    if (auto b = n->find("default_band"); b != n->end() && b->is_number() && b->get<double>() >= 0)
      f.default_band = b->get<double>();
  }
  return f;
}

Expect<MetricFacts> metric_facts_of(store::Database& db, const store::CommitRecord& commit) {
  auto runs = store::RunReader(db).runs_of_commit(commit.inherited_from.value_or(commit.id));
  if (!runs) return std::unexpected(from_store(runs.error()));
  for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
    if (it->manifest.is_object() && !it->manifest.empty()) return metric_facts(it->manifest);
  }
  return MetricFacts{};
}

Expect<std::string> ShaCache::sha(std::optional<store::CommitId> id) {
  if (!id) return std::string();
  if (auto it = known_.find(*id); it != known_.end()) return it->second;
  auto c = store::RepoReader(db_).commit(*id);
  if (!c) return std::unexpected(from_store(c.error()));
  known_[*id] = c->sha;
  return c->sha;
}

Expect<std::map<store::PointId, std::string>> point_labels(store::Database& db) {
  auto points = store::RunReader(db).points();
  if (!points) return std::unexpected(from_store(points.error()));
  std::map<store::PointId, std::string> out;
  for (const auto& p : *points) out[p.id] = point_label(p);
  return out;
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
