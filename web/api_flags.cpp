// Flags: the list (filters), one flag with its comparison, and acknowledging
// one (the API's only write).
#include "schemas/schema.h"
#include "store/analysis_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "web/api.h"
#include "web/json_views.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

Reply flag_document(store::Database& db, store::FlagId id) {
  store::AnalysisReader analysis(db);
  auto flag = analysis.flag(id);
  if (!flag) return std::unexpected(from_store(flag.error(), "flag"));
  WEB_TRY_STORE(point, store::RunReader(db).point(flag->flag.point_id));
  json out = flag_json(*flag, point_label(point));
  out["schema_version"] = kApiSchemaVersion;
  out["point"] = point_json(point);
  out["comparison"] = nullptr;
  if (flag->flag.comparison_id) {
    auto cmp = analysis.comparison(*flag->flag.comparison_id);
    if (cmp) {
      json c = comparison_json(*cmp);
      WEB_TRY_STORE(against, store::RepoReader(db).commit(cmp->against_commit_id));
      c["against"] = commit_brief(against);
      out["comparison"] = std::move(c);
    } else if (cmp.error().code != ErrorCode::kNotFound) {
      return std::unexpected(from_store(cmp.error()));
    }
  }
  return out;
}

}  // namespace

Reply Api::flags(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "state", "kind", "variant", "point", "commit", "testbed", "limit", "offset"});
  auto repo_id = q.id("repo");
  std::string state = q.word("state", {"open", "acknowledged", "any"}).value_or("open");
  auto kind = q.word("kind", {"regression", "improvement", "changepoint"});
  auto variant = q.name("variant");
  auto point = q.name("point");
  auto commit = q.sha("commit");
  auto testbed = q.id("testbed");
  int limit = static_cast<int>(q.integer("limit", 100, 1, 500));
  int offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();

  store::FlagFilter f;
  f.repo_id = repo_id;
  f.state = state == "open" ? store::FlagState::kOpen
            : state == "acknowledged" ? store::FlagState::kAcknowledged
                                      : store::FlagState::kAny;
  if (kind) f.kind = store::parse_flag_kind(*kind);
  f.variant = variant;
  f.testbed_id = testbed;
  if (point) {
    WEB_TRY_STORE(p, store::RunReader(db).find_point(*point));
    if (!p) return std::unexpected(bad_parameter("point", "'" + *point + "': no such sweep point"));
    f.point_id = p->id;
  }
  if (commit) {
    // A commit filter needs its repo: the one named, or the only one.
    WEB_TRY(repo, resolve_repo(db, q));
    WEB_TRY(c, resolve_commit(db, repo.id, *commit, "commit"));
    f.commit_id = c.id;
  }
  f.limit = limit + 1;
  f.offset = offset;
  WEB_TRY_STORE(list, store::AnalysisReader(db).flags(f));
  bool has_more = static_cast<int>(list.size()) > limit;
  if (has_more) list.pop_back();
  WEB_TRY(labels, point_labels(db));
  json flags = json::array();
  for (const auto& v : list) flags.push_back(flag_json(v, labels[v.flag.point_id]));
  return json{{"schema_version", kApiSchemaVersion},
              {"state", state},
              {"limit", limit},
              {"offset", offset},
              {"has_more", has_more},
              {"flags", std::move(flags)}};
}

Reply Api::flag(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  auto id = parse_id(request.matches[1].str());
  if (!id) return std::unexpected(parse_id_error("flag"));
  WEB_TRY(l, lease(pool_));
  return flag_document(l.db(), *id);
}

Reply Api::acknowledge(const httplib::Request& request) {
  if (!writer_) return std::unexpected(ApiError{403, "writes_disabled", "", "this server is read-only"});
  auto id = parse_id(request.matches[1].str());
  if (!id) return std::unexpected(parse_id_error("flag"));
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded()) return std::unexpected(bad_parameter("body", "not valid JSON"));
  auto schema = schemas::Schema::load("api/acknowledge_request.schema.json");
  if (!schema) return std::unexpected(from_store(schema.error()));
  if (auto valid = schema->validate(body, "body"); !valid) {
    // The validator says "body: reason"; the API names fields as paths.
    std::string where = valid.error().where;
    if (auto colon = where.find(": "); colon != std::string::npos)
      where = where.substr(0, colon) + "." + where.substr(colon + 2);
    return std::unexpected(bad_parameter(where, valid.error().message));
  }
  std::string reason = body["reason"].get<std::string>();
  std::string by = body.value("by", std::string("web"));
  auto written = writer_->with([&](store::Database& db) {
    return store::AnalysisWriter(db).acknowledge_flag(*id, reason, by);
  });
  if (!written) {
    std::string field = written.error().code == ErrorCode::kNotFound ? "flag" : "body.reason";
    return std::unexpected(from_store(written.error(), field));
  }
  WEB_TRY(l, lease(pool_));
  return flag_document(l.db(), *id);
}

}  // namespace perfwatch::web
