// Experiments and negative results: search by text, verdict, source,
// parameter, group, commit and date, each with its evidence table.
#include <map>

#include "store/experiment_store.h"
#include "web/api.h"
#include "web/json_views.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

// The experiment with its evidence and its refs' commit shas.
Expect<json> experiment_document(store::Database& db, store::ExperimentId id, ShaCache& shas, bool evidence,
                                 const std::map<store::PointId, std::string>& labels) {
  auto detail = store::ExperimentReader(db).experiment(id);
  if (!detail) return std::unexpected(from_store(detail.error(), "experiment"));
  json e = experiment_json(detail->experiment);
  for (std::size_t i = 0; i < detail->experiment.refs.size(); ++i) {
    WEB_TRY(sha, shas.sha(detail->experiment.refs[i].commit_id));
    e["refs"][i]["commit_sha"] = sha.empty() ? json(nullptr) : json(sha);
  }
  if (evidence) {
    e["evidence"] = json::array();
    for (const auto& row : detail->evidence) {
      auto label = labels.find(row.evidence.point_id);
      e["evidence"].push_back(evidence_json(row, label == labels.end() ? "" : label->second));
    }
  }
  return e;
}

}  // namespace

Reply Api::experiments(const httplib::Request& request) {
  QueryParams q(request.params,
                {"repo", "q", "verdict", "source", "param", "group", "commit", "since", "until", "limit", "offset",
                 "evidence"},
                {"param"});
  auto repo_id = q.id("repo");
  auto text = q.text("q", 200);
  auto verdict = q.word("verdict", {"accepted", "rejected", "mixed", "no_effect", "pending"});
  auto source = q.word("source", {"auto", "trailer", "manual"});
  auto params = q.all_names("param");
  auto group = q.name("group");
  auto commit = q.sha("commit");
  auto since = q.optional_integer("since", 0, 1LL << 40);
  auto until = q.optional_integer("until", 0, 1LL << 40);
  int limit = static_cast<int>(q.integer("limit", 20, 1, 100));
  int offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  bool with_evidence = q.boolean("evidence", true);
  WEB_CHECK_PARAMS(q);

  store::ExperimentFilter f;
  f.text = text.value_or("");
  if (verdict) f.verdict = store::parse_experiment_verdict(*verdict);
  if (source) f.source = store::parse_experiment_source(*source);
  for (const auto& p : params) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      return std::unexpected(bad_parameter("param", "'" + p + "': must be name=value, e.g. num_warps=8"));
    f.params.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  f.group_key = group.value_or("");
  f.repo_id = repo_id;
  f.since = since;
  f.until = until;
  f.limit = limit + 1;
  f.offset = offset;

  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  store::Transaction snapshot(db, store::Transaction::Mode::kDeferred);
  if (!snapshot.status()) return std::unexpected(from_store(snapshot.status().error()));
  if (commit) {
    WEB_TRY(repo, resolve_repo(db, q));
    WEB_TRY(c, resolve_commit(db, repo.id, *commit, "commit"));
    f.commit_id = c.inherited_from.value_or(c.id);
  }
  auto found = store::ExperimentReader(db).search(f);
  if (!found) return std::unexpected(from_store(found.error(), "param"));
  bool has_more = static_cast<int>(found->size()) > limit;
  if (has_more) found->pop_back();

  ShaCache shas(db);
  WEB_TRY(labels, point_labels(db));
  json list = json::array();
  for (const auto& e : *found) {
    WEB_TRY(doc, experiment_document(db, e.id, shas, with_evidence, labels));
    list.push_back(std::move(doc));
  }
  return json{{"schema_version", kApiSchemaVersion},
              {"limit", limit},
              {"offset", offset},
              {"has_more", has_more},
              {"experiments", std::move(list)}};
}

Reply Api::experiment(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  auto id = parse_id(request.matches[1].str());
  if (!id) return std::unexpected(parse_id_error("experiment"));
  WEB_TRY(l, lease(pool_));
  ShaCache shas(l.db());
  WEB_TRY(labels, point_labels(l.db()));
  WEB_TRY(doc, experiment_document(l.db(), *id, shas, true, labels));
  doc["schema_version"] = kApiSchemaVersion;
  return doc;
}

}  // namespace perfwatch::web
