#include "views/compare_view.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/compare.h"
#include "analysis/delta.h"
#include "judge/bands.h"
#include "store/analysis_store.h"
#include "store/history_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store/web_queries.h"
#include "views/fragments.h"
#include "views/lookup.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

using CellKey = std::pair<std::string, store::PointId>;  // variant, point

// A commit as compared: the commit named, the one whose results it carries,
// and its run medians of the metric shown, per testbed and cell.
struct Side {
  store::CommitRecord commit;
  store::CommitId effective = 0;
  std::map<store::TestbedId, std::map<CellKey, std::vector<double>>> medians;
  std::map<store::TestbedId, store::RunId> newest_run;
};

Result<Side> read_side(store::Database& db, store::RepoId repo, const std::string& sha, const std::string& field,
                       const std::string& metric) {
  if (sha.empty()) return fail(invalid_argument(field, "required: a commit (sha or a unique prefix of 4+ hex digits)"));
  auto commit = resolve_commit(db, repo, sha, field);
  if (!commit) return fail(commit.error());
  Side side{std::move(*commit), 0, {}, {}};
  side.effective = side.commit.inherited_from.value_or(side.commit.id);
  auto rows = store::WebReader(db).metric_run_medians(side.effective, std::nullopt, metric);
  if (!rows) return fail(rows.error());
  for (const auto& r : *rows) {
    if (!(r.median.median > 0)) continue;  // no geometric mean of that
    side.medians[r.testbed_id][{r.median.variant, r.median.point_id}].push_back(r.median.median);
    auto& newest = side.newest_run[r.testbed_id];
    newest = std::max(newest, r.median.run_id);
  }
  return side;
}

// The testbed compared on: the one asked for, else the one of b's newest run
// among those both commits ran on, else b's newest.
std::optional<store::TestbedId> pick_testbed(const Side& a, const Side& b, std::optional<store::TestbedId> asked) {
  if (asked) return asked;
  std::optional<store::TestbedId> best, any;
  store::RunId best_run = 0, any_run = 0;
  for (const auto& [testbed, run] : b.newest_run) {
    if (run > any_run) any = testbed, any_run = run;
    if (a.medians.count(testbed) && run > best_run) best = testbed, best_run = run;
  }
  return best ? best : any;
}

json value_json(const std::vector<double>* medians, const std::optional<store::CommitSummaryRecord>& pooled) {
  if (pooled) return pooled_json(*pooled);
  if (!medians || medians->empty()) return nullptr;
  return {{"geomean_of_run_medians", analysis::commit_value(*medians)},
          {"ci_low", nullptr},
          {"ci_high", nullptr},
          {"runs", static_cast<std::int64_t>(medians->size())}};
}

json judged_json(const store::ComparisonRecord& c, const std::optional<store::NoiseBandRecord>& band) {
  return {{"source", "judged"},
          {"basis", std::string(store::to_string(c.basis))},
          {"ratio", number_or_null(c.ratio)},
          {"delta_rel", number_or_null(analysis::delta_rel_of_ratio(c.ratio))},
          {"ci_low", number_or_null(c.ci_low)},
          {"ci_high", number_or_null(c.ci_high)},
          {"p_value", number_or_null(c.p_value)},
          {"band_rel", number_or_null(c.band_rel)},
          {"band_calibrated", band ? json(band->calibrated) : json(nullptr)},
          {"runs_a", c.against_runs},
          {"runs_b", c.runs},
          {"verdict", std::string(store::to_string(c.verdict))}};
}

json computed_json(const analysis::Comparison& c) {
  return {{"source", "computed"},
          {"basis", nullptr},
          {"ratio", c.ratio},
          {"delta_rel", c.delta_rel()},
          {"ci_low", c.ci_low},
          {"ci_high", c.ci_high},
          {"p_value", c.p_value},
          {"band_rel", c.band_rel},
          {"band_calibrated", c.band_calibrated},
          {"runs_a", c.runs_a},
          {"runs_b", c.runs_b},
          {"verdict", analysis::to_string(c.verdict)}};
}

// The commits after a up to b on b's first-parent line, oldest first; null
// when a is not on it (within kCompareRangeMax commits).
Result<json> range_json(store::Database& db, store::RepoId repo, const Side& a, const Side& b) {
  auto chain = store::HistoryReader(db).chain({repo, "", b.commit.sha}, kCompareRangeMax + 1);
  if (!chain) return fail(chain.error());
  auto at = std::find_if(chain->begin(), chain->end(), [&](const auto& c) { return c.id == a.commit.id; });
  if (at == chain->end()) return json(nullptr);
  ShaCache shas(db);
  json commits = json::array();
  for (auto it = std::make_reverse_iterator(at); it != chain->rend(); ++it) {
    auto inherited = shas.sha(it->inherited_from);
    if (!inherited) return fail(inherited.error());
    commits.push_back(commit_brief(*it, *inherited));
  }
  return commits;
}

}  // namespace

Result<json> compare_document(store::Database& db, const CompareRequest& request) {
  auto repo = resolve_repo(db, request.repo);
  if (!repo) return fail(repo.error());
  // The metric is the b side's manifest's: the newer code declares what it measures.
  if (request.b.empty()) return fail(invalid_argument("b", "required: a commit (sha or a unique prefix of 4+ hex digits)"));
  auto b_commit = resolve_commit(db, repo->id, request.b, "b");
  if (!b_commit) return fail(b_commit.error());
  auto facts = facts_of_commit(db, *b_commit);
  if (!facts) return fail(facts.error());
  auto metric = choose_metric(*facts, request.metric);
  if (!metric) return fail(metric.error());

  auto a = read_side(db, repo->id, request.a, "a", metric->name);
  if (!a) return fail(a.error());
  auto b = read_side(db, repo->id, request.b, "b", metric->name);
  if (!b) return fail(b.error());

  store::RunReader runs(db);
  json testbeds = json::array();  // those both commits ran on
  for (const auto& [id, cells] : b->medians) {
    if (!a->medians.count(id)) continue;
    auto t = runs.testbed(id);
    if (!t) return fail(t.error());
    testbeds.push_back(testbed_json(*t));
  }
  const auto testbed = pick_testbed(*a, *b, request.testbed);
  json testbed_doc = nullptr;
  if (testbed) {
    auto t = runs.testbed(*testbed);
    if (!t) return fail(field_error(t.error(), "testbed"));
    testbed_doc = testbed_json(*t);
  }

  // What judging stored: b's pooled values and comparisons against a.
  store::AnalysisReader analysis(db);
  std::map<CellKey, store::CommitSummaryRecord> pooled_a, pooled_b;
  std::map<CellKey, store::ComparisonRecord> judged;
  if (testbed && metric->judged) {
    auto sa = analysis.commit_summaries(a->effective);
    if (!sa) return fail(sa.error());
    for (const auto& s : *sa)
      if (s.testbed_id == *testbed) pooled_a[{s.variant, s.point_id}] = s;
    auto sb = analysis.commit_summaries(b->effective);
    if (!sb) return fail(sb.error());
    for (const auto& s : *sb)
      if (s.testbed_id == *testbed) pooled_b[{s.variant, s.point_id}] = s;
    auto cmps = analysis.comparisons_of_commit(b->effective);
    if (!cmps) return fail(cmps.error());
    for (const auto& c : *cmps)
      if (c.testbed_id == *testbed && c.against_commit_id == a->effective) judged[{c.variant, c.point_id}] = c;
  }

  static const std::map<CellKey, std::vector<double>> kNone;
  const auto& cells_a = testbed && a->medians.count(*testbed) ? a->medians.at(*testbed) : kNone;
  const auto& cells_b = testbed && b->medians.count(*testbed) ? b->medians.at(*testbed) : kNone;
  std::set<CellKey> keys;
  for (const auto& [k, v] : cells_a) keys.insert(k);
  for (const auto& [k, v] : cells_b) keys.insert(k);

  const analysis::Direction direction =
      metric->lower_is_better ? analysis::Direction::kLowerIsBetter : analysis::Direction::kHigherIsBetter;
  const analysis::BandPolicy policy{.default_rel = facts->default_band_rel, .reference_runs = facts->runs.per_commit};
  judge::Bands bands(db, policy);
  const std::vector<std::string> own = {judge::commit_source(a->effective), judge::commit_source(b->effective)};

  json cells = json::array();
  std::set<std::string> variant_names;
  std::set<store::PointId> point_ids;
  for (const auto& key : keys) {
    const auto& [variant, point] = key;
    variant_names.insert(variant);
    point_ids.insert(point);
    const std::vector<double>* ra = cells_a.count(key) ? &cells_a.at(key) : nullptr;
    const std::vector<double>* rb = cells_b.count(key) ? &cells_b.at(key) : nullptr;
    auto pa = pooled_a.count(key) ? std::optional(pooled_a.at(key)) : std::nullopt;
    auto pb = pooled_b.count(key) ? std::optional(pooled_b.at(key)) : std::nullopt;
    json comparison = nullptr;
    if (auto j = judged.find(key); j != judged.end()) {
      auto stored_band = analysis.noise_band(*testbed, variant, point);
      if (!stored_band) return fail(stored_band.error());
      comparison = judged_json(j->second, *stored_band);
    } else if (ra && rb) {
      analysis::NoiseBand band = analysis::noise_band(analysis::NoiseEvidence{}, policy);
      if (metric->judged) {
        auto measured = bands.band(*testbed, variant, point, false, own);
        if (!measured) return fail(measured.error());
        band = *measured;
      }
      comparison = computed_json(analysis::compare_runs(*ra, *rb, band, direction));
    }
    cells.push_back({{"variant", variant},
                     {"point_id", point},
                     {"a", value_json(ra, pa)},
                     {"b", value_json(rb, pb)},
                     {"comparison", std::move(comparison)}});
  }

  // Variants: the baseline of b's manifest first, then by name.
  json variants = json::array();
  std::vector<std::string> names(variant_names.begin(), variant_names.end());
  std::stable_sort(names.begin(), names.end(),
                   [&](const auto& x, const auto& y) { return x == facts->baseline && y != facts->baseline; });
  for (const auto& n : names) variants.push_back({{"name", n}, {"is_baseline", n == facts->baseline}});
  json points = json::array();
  auto all_points = runs.points();
  if (!all_points) return fail(all_points.error());
  for (const auto& p : *all_points)
    if (point_ids.count(p.id)) points.push_back(point_json(p));

  auto range = range_json(db, repo->id, *a, *b);
  if (!range) return fail(range.error());
  ShaCache shas(db);
  auto inherited_a = shas.sha(a->commit.inherited_from);
  if (!inherited_a) return fail(inherited_a.error());
  auto inherited_b = shas.sha(b->commit.inherited_from);
  if (!inherited_b) return fail(inherited_b.error());

  json out = {{"schema_version", kSchemaVersion},
              {"repo_id", repo->id},
              {"a", commit_brief(a->commit, *inherited_a)},
              {"b", commit_brief(b->commit, *inherited_b)},
              {"testbed", std::move(testbed_doc)},
              {"testbeds", std::move(testbeds)}};
  put_metric(out, *metric, *facts);
  out["statistic"] = "geomean_of_run_medians";
  out["variants"] = std::move(variants);
  out["points"] = std::move(points);
  out["cells"] = std::move(cells);
  out["range"] = std::move(*range);
  return out;
}

}  // namespace perfwatch::views
