// One run's full table (views/run_view.h), two runs side by side, the job
// queue with the progress of what is running (views/jobs_view.h), and
// re-queueing a commit given up on.
#include "analysis/delta.h"
#include "schemas/schema.h"
#include "store/job_progress_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "views/jobs_view.h"
#include "views/run_view.h"
#include "web/api.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

Expect<std::int64_t> path_id(const httplib::Request& request, std::size_t index, const std::string& field) {
  auto id = parse_id(request.matches[index].str());
  if (!id) return std::unexpected(parse_id_error(field));
  return *id;
}

}  // namespace

Reply Api::run(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  WEB_TRY(id, path_id(request, 1, "run"));
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::run_view(l.db(), id));
  return views::run_document(view);
}

Reply Api::compare_runs(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  WEB_TRY(a, path_id(request, 1, "run"));
  WEB_TRY(b, path_id(request, 2, "against"));
  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  store::RunReader reader(db);
  json sides = json::array();
  for (auto [id, field] : {std::pair{a, "run"}, std::pair{b, "against"}}) {
    auto run = reader.run(id);
    if (!run) return std::unexpected(from_store(run.error(), field));
    WEB_TRY_STORE(commit, store::RepoReader(db).commit(run->commit_id));
    json side = views::run_json(*run, false);
    side["commit"] = views::commit_brief(commit);
    sides.push_back(std::move(side));
  }
  WEB_TRY_STORE(facts, reader.manifest_facts(a));
  WEB_TRY_STORE(rows, reader.compare_runs(a, b));
  json list = json::array();
  for (const auto& r : rows) {
    list.push_back({{"variant", r.variant},
                    {"point", views::point_json(r.point)},
                    {"a", r.a ? views::summary_json(*r.a) : json(nullptr)},
                    {"b", r.b ? views::summary_json(*r.b) : json(nullptr)},
                    {"ratio", views::number_or_null(r.ratio)},
                    {"delta_rel", views::number_or_null(analysis::delta_rel_of_ratio(r.ratio))}});
  }
  return json{{"schema_version", kApiSchemaVersion},
              {"a", sides[0]},
              {"b", sides[1]},
              {"metric", facts.metric},
              {"lower_is_better", facts.lower_is_better},
              {"rows", std::move(list)}};
}

Reply Api::jobs(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "state", "limit", "offset"});
  views::JobsRequest r;
  r.repo = q.id("repo");
  auto state_word = q.word("state", {"queued", "running", "done", "failed", "cut_off", "skipped", "gave_up"});
  r.limit = static_cast<int>(q.integer("limit", 50, 1, views::kJobsLimitMax));
  r.offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  WEB_CHECK_PARAMS(q);
  if (state_word) r.state = store::parse_job_state(*state_word);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::jobs_view(l.db(), r));
  return views::jobs_document(view);
}

Reply Api::requeue(const httplib::Request& request, const std::string& request_body) {
  if (!writer_) return std::unexpected(ApiError{403, "writes_disabled", "", "this server is read-only"});
  const std::string sha = request.matches[1].str();
  json body = request_body.empty() ? json::object() : json::parse(request_body, nullptr, false);
  if (body.is_discarded()) return std::unexpected(bad_parameter("body", "not valid JSON"));
  auto schema = schemas::Schema::load("api/requeue_request.schema.json");
  if (!schema) return std::unexpected(from_store(schema.error()));
  if (auto valid = schema->validate(body, "body"); !valid) {
    std::string where = valid.error().where;
    if (auto colon = where.find(": "); colon != std::string::npos)
      where = where.substr(0, colon) + "." + where.substr(colon + 2);
    return std::unexpected(bad_parameter(where, valid.error().message));
  }
  const std::string by = body.value("by", std::string("web"));
  std::optional<store::Requeued> done;
  auto written = writer_->with([&](store::Database& db) -> Status {
    auto r = store::JobQueue(db).requeue(std::nullopt, sha, by);
    if (!r) return fail(r.error());
    done = std::move(*r);
    return {};
  });
  if (!written) return std::unexpected(from_store(written.error(), "commit"));
  return json{{"schema_version", kApiSchemaVersion},
              {"given_up", views::job_json(done->given_up)},
              {"job", views::job_json(done->job)}};
}

}  // namespace perfwatch::web
