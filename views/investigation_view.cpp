#include "views/investigation_view.h"

#include <map>

#include "store/experiment_store.h"
#include "views/experiment_view.h"
#include "views/fragments.h"
#include "views/lookup.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

std::string string_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Which investigation an experiment belongs to: kind, key, title.
struct Belongs {
  std::string kind, key, title;
};

Belongs belongs(const store::ExperimentRecord& e) {
  if (!e.group_key.empty()) return {"group", "group:" + e.group_key, e.group_key};
  if (e.source == store::ExperimentSource::kAuto && e.candidates.is_array() && e.candidates.size() == 1) {
    const json& c = e.candidates[0];
    const json params = c.contains("params") ? c["params"] : json::object();
    const json base = e.baseline.contains("params") ? e.baseline["params"] : json::object();
    std::string diff = params_diff(base, params);
    if (diff.empty()) diff = string_of(c, "name");
    if (!diff.empty()) return {"params", "params:" + diff, diff};
  }
  const std::string id = std::to_string(e.id);
  return {"experiment", "experiment:" + id, e.hypothesis.empty() ? "#" + id : e.hypothesis};
}

}  // namespace

Result<InvestigationsView> investigations_view(store::Database& db, const InvestigationsRequest& request) {
  if (request.limit < 1 || request.limit > kInvestigationsLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kInvestigationsLimitMax)));
  auto repo = resolve_repo(db, request.repo);
  if (!repo) return fail(repo.error());
  store::Transaction snapshot(db, store::Transaction::Mode::kDeferred);
  if (!snapshot.status()) return fail(snapshot.status().error());
  store::ExperimentFilter f;
  f.repo_id = repo->id;
  f.text = request.text;
  f.limit = kInvestigationsExperimentsMax + 1;
  store::ExperimentReader reader(db);
  auto found = reader.search(f);
  if (!found) return fail(found.error());
  InvestigationsView view;
  view.limit = request.limit;
  view.truncated = static_cast<int>(found->size()) > kInvestigationsExperimentsMax;
  if (view.truncated) found->pop_back();
  std::map<std::string, std::size_t> index;
  ShaCache shas(db);
  for (const auto& e : *found) {  // newest first
    const Belongs b = belongs(e);
    auto [it, added] = index.emplace(b.key, view.investigations.size());
    if (added) {
      if (static_cast<int>(view.investigations.size()) == request.limit) {
        view.has_more = true;
        index.erase(it);
        continue;
      }
      view.investigations.push_back({b.kind, b.key, b.title, e.hypothesis, "", {}});
    }
    Investigation& inv = view.investigations[it->second];
    auto detail = reader.experiment(e.id);
    if (!detail) return fail(detail.error());
    InvestigationStep step;
    step.id = e.id;
    for (const auto& ref : e.refs) {
      if (!ref.commit_id) continue;
      auto sha = shas.sha(ref.commit_id);
      if (!sha) return fail(sha.error());
      step.sha = *sha;
      if (ref.role == "candidate" || ref.role == "commit") break;
    }
    step.updated_at = e.updated_at;
    step.verdict = std::string(store::to_string(e.verdict));
    step.shown_verdict = shown_verdict(*detail);
    auto headlines = experiment_headlines(*detail);
    if (!headlines.empty()) step.headline = headlines.front();
    if (inv.conclusion.empty()) inv.conclusion = e.conclusion;
    inv.history.push_back(std::move(step));
  }
  return view;
}

json investigations_document(const InvestigationsView& v) {
  json list = json::array();
  for (const auto& inv : v.investigations) {
    json history = json::array();
    for (const auto& s : inv.history)
      history.push_back({{"experiment_id", s.id},
                         {"sha", s.sha.empty() ? json(nullptr) : json(s.sha)},
                         {"updated_at", s.updated_at},
                         {"verdict", s.verdict},
                         {"shown_verdict", s.shown_verdict},
                         {"headline", s.headline}});
    list.push_back({{"kind", inv.kind},
                    {"key", inv.key},
                    {"title", inv.title},
                    {"hypothesis", inv.hypothesis},
                    {"conclusion", inv.conclusion},
                    {"verdict", inv.history.front().shown_verdict},
                    {"experiments", inv.history.size()},
                    {"history", std::move(history)}});
  }
  return {{"schema_version", kSchemaVersion},
          {"limit", v.limit},
          {"has_more", v.has_more},
          {"truncated", v.truncated},
          {"investigations", std::move(list)}};
}

std::string investigations_text(const InvestigationsView& v) {
  if (v.investigations.empty()) return "no experiments\n";
  std::string out;
  for (const auto& inv : v.investigations) {
    const auto& now = inv.history.front();
    out += inv.title + " [" + inv.kind + "]: " + now.shown_verdict + " -- " + now.headline + "\n";
    std::string before;
    for (std::size_t i = 1; i < inv.history.size() && i <= 12; ++i)
      before += (before.empty() ? "" : ", ") + inv.history[i].shown_verdict +
                (inv.history[i].sha.empty() ? "" : " (" + inv.history[i].sha.substr(0, 10) + ")");
    if (!before.empty())
      out += "  before: " + before + (inv.history.size() > 13 ? ", ..." : "") + "\n";
    if (!inv.conclusion.empty()) out += "  conclusion: " + inv.conclusion + "\n";
  }
  if (v.has_more) out += "(more: raise --limit)\n";
  if (v.truncated)
    out += "(only the newest " + std::to_string(kInvestigationsExperimentsMax) + " experiments were read)\n";
  return out;
}

}  // namespace perfwatch::views
