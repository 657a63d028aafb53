#include "views/lookup.h"

#include <algorithm>

#include "store/repo_store.h"
#include "store/run_store.h"
#include "store/web_queries.h"

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

std::string point_label(const store::PointRecord& point) { return point.label.empty() ? point.key : point.label; }

namespace {

// "batch=48,heads=16" -> {{"batch","48"},{"heads","16"}}; nullopt when the
// text is not such a list.
std::optional<std::vector<std::pair<std::string, std::string>>> axis_terms(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view term = text.substr(0, comma);
    auto eq = term.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    out.emplace_back(std::string(term.substr(0, eq)), std::string(term.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// An axis value as the key writes it (runner::axis_value_text).
std::string value_text(const nlohmann::ordered_json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

bool has_axes(const store::PointRecord& p, const std::vector<std::pair<std::string, std::string>>& terms) {
  for (const auto& [name, value] : terms) {
    auto it = p.axes.find(name);
    if (it == p.axes.end() || value_text(*it) != value) return false;
  }
  return true;
}

std::string labels_of(const std::vector<const store::PointRecord*>& points) {
  std::string out;
  for (const auto* p : points) out += (out.empty() ? "" : ", ") + point_label(*p);
  return out;
}

}  // namespace

Result<store::PointRecord> resolve_point(store::Database& db, store::RepoId repo, std::string_view text) {
  // A key is a point's identity, in any repo (points are shared).
  auto by_key = store::RunReader(db).find_point(text);
  if (!by_key) return fail(by_key.error());
  if (*by_key) return **by_key;
  // A label or some axes, among the points the repo has measured.
  auto points = store::WebReader(db).points_of_repo(repo);
  if (!points) return fail(points.error());
  std::vector<const store::PointRecord*> all;
  for (const auto& p : *points) all.push_back(&p);
  std::vector<const store::PointRecord*> found;
  for (const auto* p : all)
    if (point_label(*p) == text) found.push_back(p);
  if (found.empty()) {
    if (auto terms = axis_terms(text)) {
      for (const auto* p : all)
        if (has_axes(*p, *terms)) found.push_back(p);
    }
  }
  if (found.size() == 1) return *found.front();
  if (found.size() > 1)
    return fail(invalid_argument("point", "'" + std::string(text) + "' matches " + std::to_string(found.size()) +
                                              " points (" + labels_of(found) + "); name more axes, or give the key"));
  if (all.empty()) return fail(not_found("point", "'" + std::string(text) + "': the repo has no measured point yet"));
  return fail(not_found("point", "'" + std::string(text) + "': no such point; the points are " + labels_of(all) +
                                     " (a label, a key, or axes such as " + all.front()->key + ")"));
}

Result<std::string> resolve_variant(store::Database& db, store::RepoId repo, std::string_view name) {
  auto seen = store::WebReader(db).variants_of_repo(repo);
  if (!seen) return fail(seen.error());
  std::string names;
  for (const auto& v : *seen) {
    if (v.name == name) return v.name;
    names += (names.empty() ? "" : ", ") + v.name;
  }
  if (seen->empty()) return fail(not_found("variant", "'" + std::string(name) + "': the repo has no measured variant yet"));
  return fail(not_found("variant", "'" + std::string(name) + "': no such variant; the variants are " + names));
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
