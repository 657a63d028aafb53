#include "views/alert_group_view.h"

#include <algorithm>
#include <cmath>

#include "store/alert_group_store.h"
#include "store/run_store.h"
#include "views/fragments.h"
#include "views/lookup.h"
#include "views/text_format.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

bool is_open(const store::FlagRecord& f) { return f.standing() && !f.acknowledged; }

// A flag's direction: its kind, or for changepoint and drift the verdict in its detail.
bool is_regression(const store::FlagRecord& f) {
  if (f.kind == store::FlagKind::kRegression) return true;
  if (f.kind == store::FlagKind::kImprovement) return false;
  const auto it = f.detail.find("verdict");
  return it != f.detail.end() && it->is_string() && *it == "regression";
}

// Regressions outrank improvements; then the larger change in log terms.
bool worse(const store::FlagRecord& a, const store::FlagRecord& b) {
  if (is_regression(a) != is_regression(b)) return is_regression(a);
  return std::abs(std::log1p(a.magnitude_rel)) > std::abs(std::log1p(b.magnitude_rel));
}

std::string label_of(const AlertGroupsView& v, const store::FlagView& f) {
  auto it = v.labels.find(f.flag.point_id);
  return it == v.labels.end() || it->second.empty() ? f.point_key : it->second;
}

}  // namespace

std::optional<store::GroupTriage> parse_person_triage(std::string_view word) {
  if (word == "ack" || word == "acknowledged") return store::GroupTriage::kAcknowledged;
  if (word == "invalid") return store::GroupTriage::kInvalid;
  if (word == "expected") return store::GroupTriage::kExpected;
  return std::nullopt;
}

Result<AlertGroupsView> alert_groups_view(store::Database& db, const AlertGroupsRequest& request) {
  if (request.state != "open" && request.state != "closed" && request.state != "any")
    return fail(invalid_argument("state", "must be open, closed or any"));
  if (request.limit < 1 || request.limit > kAlertGroupsLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kAlertGroupsLimitMax)));
  auto repo = resolve_repo(db, request.repo);
  if (!repo) return fail(repo.error());
  store::FlagFilter f;
  f.repo_id = repo->id;
  f.testbed_id = request.testbed;
  f.limit = 1000000;  // flags are few (hundreds): grouped here
  if (request.commit) {
    auto c = resolve_commit(db, repo->id, *request.commit, "commit");
    if (!c) return fail(c.error());
    f.commit_id = c->id;
  }
  auto flags = store::AnalysisReader(db).flags(f);
  if (!flags) return fail(flags.error());
  auto triages = store::AlertGroupReader(db).triages(repo->id);
  if (!triages) return fail(triages.error());
  auto testbeds = store::RunReader(db).testbeds();
  if (!testbeds) return fail(testbeds.error());
  std::map<store::TestbedId, std::string> testbed_names;
  for (const auto& t : *testbeds) testbed_names[t.id] = t.name;

  // Newest flag first from the store: a group's place is its newest flag's.
  std::vector<AlertGroup> groups;
  std::map<std::pair<store::CommitId, store::TestbedId>, std::size_t> index;
  for (auto& fv : *flags) {
    if (!fv.flag.standing()) continue;
    const auto key = std::pair{fv.flag.commit_id, fv.flag.testbed_id};
    auto [it, added] = index.emplace(key, groups.size());
    if (added) {
      AlertGroup g;
      g.commit_id = fv.flag.commit_id;
      g.sha = fv.sha;
      g.subject = fv.subject;
      g.testbed_id = fv.flag.testbed_id;
      g.testbed = testbed_names.count(g.testbed_id) ? testbed_names[g.testbed_id] : "";
      groups.push_back(std::move(g));
    }
    AlertGroup& g = groups[it->second];
    g.open += is_open(fv.flag);
    g.kinds.insert(std::string(store::to_string(fv.flag.kind)));
    g.cells.insert({fv.flag.variant, fv.flag.point_id});
    g.flags.push_back(std::move(fv));
    if (worse(g.flags.back().flag, g.flags[g.worst].flag)) g.worst = g.flags.size() - 1;
  }
  ShaCache shas(db);
  for (const auto& t : *triages) {
    auto it = index.find({t.commit_id, t.testbed_id});
    if (it == index.end()) continue;
    AlertGroup& g = groups[it->second];
    g.triage = t;
    auto sha = shas.sha(t.linked_commit_id);
    if (!sha) return fail(sha.error());
    g.linked_sha = *sha;
  }
  AlertGroupsView view;
  view.state = request.state;
  view.limit = request.limit;
  for (auto& g : groups) {
    g.state = g.open > 0 ? "open" : g.triage ? std::string(store::to_string(g.triage->triage)) : "acknowledged";
    const bool open = g.open > 0;
    if (request.state == "open" && !open) continue;
    if (request.state == "closed" && open) continue;
    if (static_cast<int>(view.groups.size()) == request.limit) {
      view.has_more = true;
      break;
    }
    view.groups.push_back(std::move(g));
  }
  auto labels = point_labels(db);
  if (!labels) return fail(labels.error());
  view.labels = std::move(*labels);
  return view;
}

json alert_groups_document(const AlertGroupsView& v) {
  json groups = json::array();
  for (const auto& g : v.groups) {
    const store::FlagView& w = g.flags[g.worst];
    json flags = json::array();
    for (const auto& f : g.flags) flags.push_back(flag_json(f, label_of(v, f)));
    json triage = nullptr;
    if (g.triage) {
      triage = {{"triage", store::to_string(g.triage->triage)},
                {"reason", g.triage->reason},
                {"by", g.triage->by},
                {"at", g.triage->at},
                {"linked_sha", g.linked_sha.empty() ? json(nullptr) : json(g.linked_sha)}};
    }
    json kinds = json::array();
    for (const auto& k : g.kinds) kinds.push_back(k);
    groups.push_back({{"commit_id", g.commit_id},
                      {"sha", g.sha},
                      {"subject", g.subject},
                      {"testbed_id", g.testbed_id},
                      {"testbed", g.testbed},
                      {"state", g.state},
                      {"open", g.open},
                      {"cells", g.cells.size()},
                      {"kinds", std::move(kinds)},
                      {"worst",
                       {{"flag_id", w.flag.id},
                        {"kind", store::to_string(w.flag.kind)},
                        {"regression", is_regression(w.flag)},
                        {"magnitude_rel", w.flag.magnitude_rel},
                        {"variant", w.flag.variant},
                        {"point_key", w.point_key},
                        {"point_label", label_of(v, w)}}},
                      {"triage", std::move(triage)},
                      {"flags", std::move(flags)}});
  }
  return {{"schema_version", kSchemaVersion},
          {"state", v.state},
          {"limit", v.limit},
          {"has_more", v.has_more},
          {"groups", std::move(groups)}};
}

std::string alert_groups_text(const AlertGroupsView& v) {
  using namespace text;
  if (v.groups.empty()) return v.state == "open" ? "no open alert groups\n" : "no alert groups\n";
  std::string out = pad("commit", 12) + pad("testbed", 12) + pad("state", 14) + lpad("worst", 9) + "  " +
                    pad("where", 20) + lpad("cells", 6) + "  " + pad("kinds", 24) + "subject\n";
  for (const auto& g : v.groups) {
    const store::FlagView& w = g.flags[g.worst];
    std::string kinds;
    for (const auto& k : g.kinds) kinds += (kinds.empty() ? "" : ",") + k;
    std::string state = g.state;
    if (g.state == "open" && g.open < static_cast<int>(g.flags.size()))
      state += " " + std::to_string(g.open) + "/" + std::to_string(g.flags.size());
    out += pad(g.sha.substr(0, 10), 12) + pad(g.testbed, 12) + pad(state, 14) +
           lpad(signed_percent(w.flag.magnitude_rel), 9) + "  " + pad(w.flag.variant + " " + label_of(v, w), 20) +
           lpad(std::to_string(g.cells.size()), 6) + "  " + pad(kinds, 24) + g.subject + "\n";
    if (g.triage) {
      out += "            " + std::string(store::to_string(g.triage->triage)) +
             (g.linked_sha.empty() ? "" : " (" + g.linked_sha.substr(0, 10) + ")") + ": " + g.triage->reason +
             (g.triage->by.empty() ? "" : " -- " + g.triage->by) + "\n";
    }
  }
  if (v.has_more) out += "(more: raise --limit)\n";
  return out;
}

Result<GroupKey> resolve_group(store::Database& db, std::optional<store::RepoId> repo_id, std::string_view sha,
                               const std::optional<std::string>& testbed) {
  auto repo = resolve_repo(db, repo_id);
  if (!repo) return fail(repo.error());
  auto commit = resolve_commit(db, repo->id, sha, "commit");
  if (!commit) return fail(commit.error());
  store::FlagFilter f;
  f.commit_id = commit->id;
  f.limit = 1000000;
  auto flags = store::AnalysisReader(db).flags(f);
  if (!flags) return fail(flags.error());
  std::set<store::TestbedId> on;
  for (const auto& fv : *flags)
    if (fv.flag.standing()) on.insert(fv.flag.testbed_id);
  if (on.empty())
    return fail(Error{ErrorCode::kNotFound, "commit",
                      commit->sha.substr(0, 10) + " has no standing flag: no alert group to triage"});
  auto testbeds = store::RunReader(db).testbeds();
  if (!testbeds) return fail(testbeds.error());
  std::string names;
  for (const auto& t : *testbeds)
    if (on.count(t.id)) names += (names.empty() ? "" : ", ") + t.name;
  if (!testbed) {
    if (on.size() == 1) return GroupKey{std::move(*commit), *on.begin()};
    return fail(invalid_argument("testbed", "the commit has flags on several testbeds: name one of " + names));
  }
  for (const auto& t : *testbeds) {
    if ((t.name == *testbed || std::to_string(t.id) == *testbed) && on.count(t.id))
      return GroupKey{std::move(*commit), t.id};
  }
  return fail(invalid_argument("testbed", "'" + *testbed + "' has no flags of this commit: name one of " + names));
}

}  // namespace perfwatch::views
