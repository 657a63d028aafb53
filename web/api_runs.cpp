// One run's full table (views/run_view.h), two runs side by side, and the
// job queue with the progress of what is running.
#include "analysis/delta.h"
#include "store/job_progress_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
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
  auto repo = q.id("repo");
  auto state_word = q.word("state", {"queued", "running", "done", "failed", "cut_off", "skipped"});
  int limit = static_cast<int>(q.integer("limit", 50, 1, 500));
  int offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  store::JobFilter f;
  f.repo_id = repo;
  if (state_word) f.state = store::parse_job_state(*state_word);
  f.limit = limit + 1;
  f.offset = offset;
  store::JobReader jobs(db);
  WEB_TRY_STORE(list, jobs.jobs(f));
  bool has_more = static_cast<int>(list.size()) > limit;
  if (has_more) list.pop_back();
  WEB_TRY_STORE(counts, jobs.counts());

  store::RunReader runs(db);
  json out_jobs = json::array();
  for (const auto& j : list) {
    json job = views::job_json(j);
    job["progress"] = nullptr;
    if (j.state == store::JobState::kRunning) {
      // Live: trials stored so far in each of its runs, and the cells (variant
      // x point) that have a trial against those its manifest plans; plus the
      // daemon's own report (store/job_progress_store.h).
      json run_list = json::array();
      for (auto run_id : j.run_ids) {
        WEB_TRY_STORE(table, runs.table(run_id));
        WEB_TRY_STORE(facts, runs.manifest_facts(run_id));
        std::int64_t trials = 0, cells_done = 0;
        for (const auto& c : table.cells) {
          trials += c.trials;
          if (c.trials > 0 || c.summary) ++cells_done;
        }
        run_list.push_back({{"run_id", run_id},
                            {"status", std::string(store::to_string(table.run.status))},
                            {"started_at", table.run.started_at},
                            {"trials", trials},
                            {"cells_done", cells_done},
                            {"cells_planned", facts.cells() > 0 ? json(facts.cells()) : json(nullptr)}});
      }
      WEB_TRY_STORE(reported, store::JobProgressReader(db).progress(j.id));
      job["progress"] = {{"runs", std::move(run_list)},
                         {"report", reported ? store::to_json(*reported) : json(nullptr)}};
    }
    out_jobs.push_back(std::move(job));
  }
  json by_state = json::object();
  for (const auto& [s, n] : counts) by_state[std::string(store::to_string(s))] = n;
  return json{{"schema_version", kApiSchemaVersion},
              {"counts", std::move(by_state)},
              {"limit", limit},
              {"offset", offset},
              {"has_more", has_more},
              {"jobs", std::move(out_jobs)}};
}

}  // namespace perfwatch::web
