#include "views/jobs_view.h"

#include <algorithm>

#include "store/job_progress_store.h"
#include "store/run_store.h"
#include "views/fragments.h"
#include "views/text_format.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

// Live: trials stored so far in each of its runs, and the cells (variant x
// point) that have a trial against those its manifest plans; plus the
// daemon's own report (store/job_progress_store.h).
Result<json> progress_of(store::Database& db, const store::JobRecord& j) {
  store::RunReader runs(db);
  json run_list = json::array();
  for (auto run_id : j.run_ids) {
    auto table = runs.table(run_id);
    if (!table) return fail(table.error());
    auto facts = runs.manifest_facts(run_id);
    if (!facts) return fail(facts.error());
    std::int64_t trials = 0, cells_done = 0;
    for (const auto& c : table->cells) {
      trials += c.trials;
      if (c.trials > 0 || c.summary) ++cells_done;
    }
    run_list.push_back({{"run_id", run_id},
                        {"status", std::string(store::to_string(table->run.status))},
                        {"started_at", table->run.started_at},
                        {"trials", trials},
                        {"cells_done", cells_done},
                        {"cells_planned", facts->cells() > 0 ? json(facts->cells()) : json(nullptr)}});
  }
  auto reported = store::JobProgressReader(db).progress(j.id);
  if (!reported) return fail(reported.error());
  return json{{"runs", std::move(run_list)}, {"report", *reported ? store::to_json(**reported) : json(nullptr)}};
}

}  // namespace

Result<JobsView> jobs_view(store::Database& db, const JobsRequest& request) {
  if (request.limit < 1 || request.limit > kJobsLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kJobsLimitMax)));
  if (request.offset < 0) return fail(invalid_argument("offset", "must not be negative"));
  store::JobFilter f;
  f.repo_id = request.repo;
  f.state = request.state;
  f.commit_sha = request.commit;
  f.limit = request.limit + 1;  // one more says whether there is a next page
  f.offset = request.offset;
  store::JobReader jobs(db);
  auto list = jobs.jobs(f);
  if (!list) return fail(list.error());
  auto counts = jobs.counts();
  if (!counts) return fail(counts.error());
  JobsView view;
  view.limit = request.limit;
  view.offset = request.offset;
  view.has_more = static_cast<int>(list->size()) > request.limit;
  if (view.has_more) list->pop_back();
  view.jobs = std::move(*list);
  view.counts = std::move(*counts);
  for (const auto& j : view.jobs) {
    if (j.state != store::JobState::kRunning) continue;
    auto p = progress_of(db, j);
    if (!p) return fail(p.error());
    view.progress[j.id] = std::move(*p);
  }
  return view;
}

json jobs_document(const JobsView& v) {
  json jobs = json::array();
  for (const auto& j : v.jobs) {
    json job = job_json(j);
    auto p = v.progress.find(j.id);
    job["progress"] = p == v.progress.end() ? json(nullptr) : p->second;
    jobs.push_back(std::move(job));
  }
  json by_state = json::object();
  for (const auto& [s, n] : v.counts) by_state[std::string(store::to_string(s))] = n;
  return {{"schema_version", kSchemaVersion},
          {"counts", std::move(by_state)},
          {"limit", v.limit},
          {"offset", v.offset},
          {"has_more", v.has_more},
          {"jobs", std::move(jobs)}};
}

std::string jobs_text(const JobsView& v) {
  using namespace text;
  std::string out = "jobs:";
  bool first = true;
  for (const auto& [s, n] : v.counts) {
    if (n == 0) continue;
    out += std::string(first ? " " : ", ") + std::to_string(n) + " " + std::string(store::to_string(s));
    first = false;
  }
  out += first ? " none\n" : "\n";
  if (v.jobs.empty()) return out;
  out += "\n" + pad("id", 7) + pad("state", 10) + pad("kind", 10) + pad("commit", 12) + lpad("attempts", 8) + "  " +
         pad("stops", 7) + "when\n";
  for (const auto& j : v.jobs) {
    const store::UnixSeconds when = j.finished_at.value_or(j.started_at.value_or(j.enqueued_at));
    out += pad(std::to_string(j.id), 7) + pad(std::string(store::to_string(j.state)), 10) +
           pad(std::string(store::to_string(j.kind)), 10) + pad(j.commit_sha.substr(0, 10), 12) +
           lpad(std::to_string(j.attempts), 8) + "  " + pad(std::to_string(j.stops), 7) + date(when) + "\n";
    if (!j.message.empty()) out += "       " + j.message + "\n";
    if (j.state == store::JobState::kGaveUp)
      out += "       re-queue with: perfwatch jobs requeue " + j.commit_sha.substr(0, 10) + "\n";
  }
  return out;
}

}  // namespace perfwatch::views
