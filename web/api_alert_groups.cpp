// Alert groups: the open (or closed) groups with their summaries, and
// triaging one -- acknowledged, invalid or expected, with a reason -- which
// acknowledges its flags (store/alert_group_store.h). Writes need the token.
#include "schemas/schema.h"
#include "store/alert_group_store.h"
#include "views/alert_group_view.h"
#include "web/api.h"

namespace perfwatch::web {

using nlohmann::json;

Reply Api::alert_groups(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "state", "testbed", "commit", "limit"});
  views::AlertGroupsRequest r;
  r.repo = q.id("repo");
  r.state = q.word("state", {"open", "closed", "any"}).value_or("open");
  r.testbed = q.id("testbed");
  r.commit = q.sha("commit");
  r.limit = static_cast<int>(q.integer("limit", r.limit, 1, views::kAlertGroupsLimitMax));
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::alert_groups_view(l.db(), r));
  return views::alert_groups_document(view);
}

Reply Api::triage_group(const httplib::Request& request, const std::string& request_body) {
  if (!writer_) return std::unexpected(ApiError{403, "writes_disabled", "", "this server is read-only"});
  const std::string sha = request.matches[1].str();
  json body = json::parse(request_body, nullptr, false);
  if (body.is_discarded()) return std::unexpected(bad_parameter("body", "not valid JSON"));
  auto schema = schemas::Schema::load("api/triage_request.schema.json");
  if (!schema) return std::unexpected(from_store(schema.error()));
  if (auto valid = schema->validate(body, "body"); !valid) {
    std::string where = valid.error().where;
    if (auto colon = where.find(": "); colon != std::string::npos)
      where = where.substr(0, colon) + "." + where.substr(colon + 2);
    return std::unexpected(bad_parameter(where, valid.error().message));
  }
  const auto triage = views::parse_person_triage(body["triage"].get<std::string>());
  if (!triage) return std::unexpected(bad_parameter("body.triage", "must be ack, invalid or expected"));
  std::optional<std::string> testbed;
  if (body.contains("testbed")) testbed = body["testbed"].get<std::string>();
  std::optional<store::RepoId> repo;
  if (body.contains("repo")) repo = body["repo"].get<store::RepoId>();
  store::GroupTriageRecord record;
  record.triage = *triage;
  record.reason = body["reason"].get<std::string>();
  record.by = body.value("by", std::string("web"));
  std::optional<Error> view_error;
  auto written = writer_->with([&](store::Database& db) -> Status {
    auto key = views::resolve_group(db, repo, sha, testbed);
    if (!key) {
      view_error = key.error();
      return {};
    }
    record.commit_id = key->commit.id;
    record.testbed_id = key->testbed;
    auto n = store::AlertGroupWriter(db).triage(record);
    if (!n) return fail(n.error());
    return {};
  });
  if (view_error) return std::unexpected(from_view(*view_error));
  if (!written) return std::unexpected(from_store(written.error(), "body.reason"));
  WEB_TRY(l, lease(pool_));
  views::AlertGroupsRequest r;
  r.repo = repo;
  r.state = "any";
  r.commit = sha;
  r.testbed = record.testbed_id;
  WEB_TRY_VIEW(view, views::alert_groups_view(l.db(), r));
  return views::alert_groups_document(view);
}

}  // namespace perfwatch::web
