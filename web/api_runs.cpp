// One run's full table, two runs side by side, and the job queue with the
// progress of what is running.
#include <map>

#include "store/job_progress_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "web/api.h"
#include "web/json_views.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

Expect<std::int64_t> path_id(const httplib::Request& request, std::size_t index, const std::string& field) {
  auto id = parse_id(request.matches[index].str());
  if (!id) return std::unexpected(parse_id_error(field));
  return *id;
}

// Cells a run's manifest plans: variants x the product of the sweep's axes.
std::optional<std::int64_t> planned_cells(const json& manifest) {
  if (!manifest.is_object()) return std::nullopt;
  auto variants = manifest.find("variants");
  auto sweep = manifest.find("sweep");
  if (variants == manifest.end() || !variants->is_array() || sweep == manifest.end() || !sweep->is_object())
    return std::nullopt;
  std::int64_t points = 1;
  for (const auto& [axis, values] : sweep->items()) {
    if (values.is_array()) points *= static_cast<std::int64_t>(values.size());
  }
  return static_cast<std::int64_t>(variants->size()) * points;
}

}  // namespace

Reply Api::run(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  WEB_TRY(id, path_id(request, 1, "run"));
  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  store::RunReader reader(db);
  auto table = reader.table(id);
  if (!table) return std::unexpected(from_store(table.error(), "run"));
  WEB_TRY_STORE(commit, store::RepoReader(db).commit(table->run.commit_id));
  MetricFacts facts = metric_facts(table->run.manifest);
  json testbed = nullptr;
  if (table->run.testbed_id) {
    WEB_TRY_STORE(t, reader.testbed(*table->run.testbed_id));
    testbed = testbed_json(t);
  }
  std::map<store::VariantId, const store::VariantRecord*> variants;
  store::VariantId baseline = 0;
  for (const auto& v : table->variants) {
    variants[v.id] = &v;
    if (v.is_baseline) baseline = v.id;
  }
  std::map<store::PointId, const store::PointRecord*> points;
  for (const auto& p : table->points) points[p.id] = &p;
  std::map<std::pair<store::VariantId, store::PointId>, const store::RunTableCell*> cell_at;
  for (const auto& c : table->cells) cell_at[{c.variant_id, c.point_id}] = &c;

  json cells = json::array();
  for (const auto& c : table->cells) {
    json delta = nullptr;
    if (baseline && c.variant_id != baseline && c.summary && c.summary->median) {
      auto base = cell_at.find({baseline, c.point_id});
      if (base != cell_at.end() && base->second->summary && base->second->summary->median &&
          *base->second->summary->median != 0)
        delta = *c.summary->median / *base->second->summary->median - 1.0;
    }
    cells.push_back({{"variant_id", c.variant_id},
                     {"variant", variants.count(c.variant_id) ? variants[c.variant_id]->name : ""},
                     {"point_id", c.point_id},
                     {"point_key", points.count(c.point_id) ? points[c.point_id]->key : ""},
                     {"trials", c.trials},
                     {"summary", c.summary ? summary_json(*c.summary) : json(nullptr)},
                     {"check", c.check ? check_json(*c.check) : json(nullptr)},
                     {"delta_vs_baseline", delta}});
  }
  json out = {{"schema_version", kApiSchemaVersion},
              {"run", run_json(table->run, true)},
              {"commit", commit_brief(commit)},
              {"testbed", testbed},
              {"metric", facts.metric},
              {"lower_is_better", facts.lower_is_better},
              {"variants", json::array()},
              {"points", json::array()},
              {"cells", std::move(cells)}};
  for (const auto& v : table->variants) out["variants"].push_back(variant_json(v));
  for (const auto& p : table->points) out["points"].push_back(point_json(p));
  return out;
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
  MetricFacts facts;
  for (auto [id, field] : {std::pair{a, "run"}, std::pair{b, "against"}}) {
    auto run = reader.run(id);
    if (!run) return std::unexpected(from_store(run.error(), field));
    WEB_TRY_STORE(commit, store::RepoReader(db).commit(run->commit_id));
    json side = run_json(*run, false);
    side["commit"] = commit_brief(commit);
    sides.push_back(std::move(side));
    if (id == a) facts = metric_facts(run->manifest);
  }
  WEB_TRY_STORE(rows, reader.compare_runs(a, b));
  json list = json::array();
  for (const auto& r : rows) {
    list.push_back({{"variant", r.variant},
                    {"point", point_json(r.point)},
                    {"a", r.a ? summary_json(*r.a) : json(nullptr)},
                    {"b", r.b ? summary_json(*r.b) : json(nullptr)},
                    {"ratio", number_or_null(r.ratio)},
                    {"delta_rel", r.ratio ? json(*r.ratio - 1.0) : json(nullptr)}});
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
    json job = job_json(j);
    job["progress"] = nullptr;
    if (j.state == store::JobState::kRunning) {
      // Live: trials stored so far in each of its runs, and the cells (variant
      // x point) that have a trial against those its manifest plans; plus the
      // daemon's own report of its step.
      json run_list = json::array();
      for (auto run_id : j.run_ids) {
        WEB_TRY_STORE(table, runs.table(run_id));
        std::int64_t trials = 0, cells_done = 0;
        for (const auto& c : table.cells) {
          trials += c.trials;
          if (c.trials > 0 || c.summary) ++cells_done;
        }
        auto planned = planned_cells(table.run.manifest);
        run_list.push_back({{"run_id", run_id},
                            {"status", std::string(store::to_string(table.run.status))},
                            {"started_at", table.run.started_at},
                            {"trials", trials},
                            {"cells_done", cells_done},
                            {"cells_planned", planned ? json(*planned) : json(nullptr)}});
      }
      json planned_runs = nullptr;
      if (j.options.is_object() && j.options.contains("runs") && j.options["runs"].is_number_integer())
        planned_runs = j.options["runs"];
      // What the daemon says it is doing (step and detail), when it says it.
      WEB_TRY_STORE(reported, store::JobProgressReader(db).progress(j.id));
      job["progress"] = {{"runs", std::move(run_list)},
                         {"runs_planned", planned_runs},
                         {"step", reported ? json(reported->step) : json(nullptr)},
                         {"detail", reported ? reported->detail : json(nullptr)},
                         {"updated_at", reported ? json(reported->updated_at) : json(nullptr)}};
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
