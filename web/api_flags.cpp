// Flags: the list (filters), one flag with its comparison (views/flag_view.h),
// and acknowledging one (the API's only write).
#include "schemas/schema.h"
#include "store/analysis_store.h"
#include "views/flag_view.h"
#include "web/api.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

Reply flag_reply(store::Database& db, store::FlagId id) {
  WEB_TRY_VIEW(view, views::flag_view(db, id));
  return views::flag_document(view);
}

}  // namespace

Reply Api::flags(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "state", "kind", "variant", "point", "commit", "testbed", "limit", "offset"});
  views::FlagsRequest r;
  r.repo = q.id("repo");
  std::string state = q.word("state", {"open", "acknowledged", "withdrawn", "any"}).value_or("open");
  auto kind = q.word("kind", {"regression", "improvement", "changepoint", "drift"});
  r.variant = q.name("variant");
  r.point = q.text("point", 200);  // a label, a key or axes: any printable text
  r.commit = q.sha("commit");
  r.testbed = q.id("testbed");
  r.limit = static_cast<int>(q.integer("limit", r.limit, 1, views::kFlagsLimitMax));
  r.offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  WEB_CHECK_PARAMS(q);
  r.state = state == "open" ? store::FlagState::kOpen
            : state == "acknowledged" ? store::FlagState::kAcknowledged
            : state == "withdrawn"    ? store::FlagState::kWithdrawn
                                      : store::FlagState::kAny;
  if (kind) r.kind = store::parse_flag_kind(*kind);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::flags_view(l.db(), r));
  return views::flags_document(view);
}

Reply Api::flag(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  auto id = parse_id(request.matches[1].str());
  if (!id) return std::unexpected(parse_id_error("flag"));
  WEB_TRY(l, lease(pool_));
  return flag_reply(l.db(), *id);
}

Reply Api::acknowledge(const httplib::Request& request, const std::string& request_body) {
  if (!writer_) return std::unexpected(ApiError{403, "writes_disabled", "", "this server is read-only"});
  auto id = parse_id(request.matches[1].str());
  if (!id) return std::unexpected(parse_id_error("flag"));
  json body = json::parse(request_body, nullptr, false);
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
  return flag_reply(l.db(), *id);
}

}  // namespace perfwatch::web
