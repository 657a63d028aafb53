// A point's history for one variant: per commit of the branch (oldest
// first) the pooled median with its CI, the run medians behind it, and the
// flag; with the point's noise band. Served from indexed SQL (summaries and
// commit_summaries, never trials): see benchmarks/web_history_bench.cpp.
#include <algorithm>

#include "store/history_store.h"
#include "store/repo_store.h"
#include "web/api.h"
#include "web/json_views.h"
#include "web/json_writer.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Reply Api::history(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "branch", "variant", "point", "testbed", "limit"});
  auto variant = q.name("variant");
  auto point = q.name("point");
  auto testbed = q.id("testbed");
  int limit = static_cast<int>(q.integer("limit", 200, 1, 5000));
  WEB_CHECK_PARAMS(q);
  if (!variant) return std::unexpected(bad_parameter("variant", "required: the variant to chart"));
  if (!point) return std::unexpected(bad_parameter("point", "required: the sweep point's key"));

  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  WEB_TRY(repo, resolve_repo(db, q));
  WEB_TRY(branch, resolve_branch(db, repo, q));
  store::HistoryQuery hq;
  hq.start = {repo.id, branch.name, branch.head_sha};
  hq.variant = *variant;
  hq.point_key = *point;
  hq.testbed_id = testbed;
  hq.limit = limit;
  auto history = store::HistoryReader(db).point_history(hq);
  if (!history) return std::unexpected(from_store(history.error(), "point"));

  // The metric and the default band from the newest measured commit's manifest.
  MetricFacts facts;
  for (auto it = history->entries.rbegin(); it != history->entries.rend(); ++it) {
    if (it->runs.empty() && !it->pooled) continue;
    auto c = store::RepoReader(db).commit(it->inherited_from.value_or(it->commit_id));
    if (!c) return std::unexpected(from_store(c.error()));
    WEB_TRY(f, metric_facts_of(db, *c));
    facts = f;
    break;
  }

  // Written straight to text: a tree of a thousand entries would cost more
  // than the query (benchmarks/web_history_bench.md).
  std::string out;
  out.reserve(512 + history->entries.size() * 600);
  JsonWriter w(out);
  w.begin_object();
  w.key("schema_version").value(kApiSchemaVersion);
  w.key("repo_id").value(repo.id);
  w.key("branch").value(branch.name);
  w.key("variant").value(history->variant);
  w.key("point").value(point_json(history->point));
  w.key("testbed_id").value(history->testbed_id);
  w.key("metric").value(facts.metric);
  w.key("lower_is_better").value(facts.lower_is_better);
  w.key("band").value(history->band ? band_json(*history->band) : default_band_json(facts.default_band));
  w.key("limit").value(limit);
  w.key("entries").begin_array();
  std::vector<double> medians;
  for (const auto& e : history->entries) {
    w.begin_object();
    w.key("commit_id").value(e.commit_id);
    w.key("sha").value(e.sha);
    w.key("short_sha").value(std::string_view(e.sha).substr(0, 10));
    w.key("subject").value(e.subject);
    w.key("author").value(e.author);
    w.key("committed_at").value(e.committed_at);
    w.key("inherited").value(e.inherited_from.has_value());
    w.key("pooled").value(e.pooled.has_value());
    medians.clear();
    for (const auto& r : e.runs) medians.push_back(r.median);
    if (e.pooled) {
      w.key("median").value(e.pooled->median);
      w.key("ci_low").value(e.pooled->ci_low);
      w.key("ci_high").value(e.pooled->ci_high);
    } else {
      // Not pooled by the analysis yet: the median of its runs, no interval.
      w.key("median");
      medians.empty() ? w.null() : w.value(median_of(medians));
      w.key("ci_low").null();
      w.key("ci_high").null();
    }
    w.key("runs").begin_array();
    for (const auto& r : e.runs) {
      w.begin_object();
      w.key("run_id").value(r.run_id);
      w.key("kind").value(store::to_string(r.kind));
      w.key("median").value(r.median);
      w.key("ci_low").value(r.ci_low);
      w.key("ci_high").value(r.ci_high);
      w.key("n").value(r.n);
      w.end_object();
    }
    w.end_array();
    w.key("flag");
    e.flag ? w.value(flag_brief(*e.flag)) : w.null();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return Body::text(std::move(out));
}

}  // namespace perfwatch::web
