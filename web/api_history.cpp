// A point's history for one variant: per commit of the branch (oldest
// first) the pooled median with its CI, the run medians behind it, and the
// flag; with the point's noise band. Served from indexed SQL (summaries and
// commit_summaries, never trials): see benchmarks/web_history_bench.cpp.
#include <algorithm>

#include "store/history_store.h"
#include "store/repo_store.h"
#include "web/api.h"
#include "web/json_views.h"

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

  json entries = json::array();
  for (const auto& e : history->entries) {
    json runs = json::array();
    std::vector<double> medians;
    for (const auto& r : e.runs) {
      runs.push_back({{"run_id", r.run_id}, {"kind", std::string(store::to_string(r.kind))}, {"median", r.median},
                      {"ci_low", number_or_null(r.ci_low)}, {"ci_high", number_or_null(r.ci_high)}, {"n", r.n}});
      medians.push_back(r.median);
    }
    json median = nullptr, ci_low = nullptr, ci_high = nullptr;
    if (e.pooled) {
      median = e.pooled->median;
      ci_low = number_or_null(e.pooled->ci_low);
      ci_high = number_or_null(e.pooled->ci_high);
    } else if (!medians.empty()) {
      median = median_of(medians);  // not pooled by the analysis yet: the median of its runs
    }
    entries.push_back({{"commit_id", e.commit_id},
                       {"sha", e.sha},
                       {"short_sha", e.sha.substr(0, 10)},
                       {"subject", e.subject},
                       {"author", e.author},
                       {"committed_at", e.committed_at},
                       {"inherited", e.inherited_from.has_value()},
                       {"pooled", e.pooled.has_value()},
                       {"median", median},
                       {"ci_low", ci_low},
                       {"ci_high", ci_high},
                       {"runs", std::move(runs)},
                       {"flag", e.flag ? flag_brief(*e.flag) : json(nullptr)}});
  }
  return json{{"schema_version", kApiSchemaVersion},
              {"repo_id", repo.id},
              {"branch", branch.name},
              {"variant", history->variant},
              {"point", point_json(history->point)},
              {"testbed_id", history->testbed_id ? json(*history->testbed_id) : json(nullptr)},
              {"metric", facts.metric},
              {"lower_is_better", facts.lower_is_better},
              {"band", history->band ? band_json(*history->band) : default_band_json(facts.default_band)},
              {"limit", limit},
              {"entries", std::move(entries)}};
}

}  // namespace perfwatch::web
