// Repos, branches, commits (list and one commit's page), what can be charted,
// and the A/B table of one commit's variants.
#include <algorithm>
#include <map>
#include <set>

#include "store/analysis_store.h"
#include "store/experiment_store.h"
#include "store/history_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store/web_queries.h"
#include "analysis/compare.h"
#include "analysis/delta.h"
#include "views/commits_view.h"
#include "views/metric_choice.h"
#include "web/api.h"

namespace perfwatch::web {

using nlohmann::json;
using views::band_json;
using views::comparison_json;
using views::commit_brief;
using views::commit_full;
using views::judged_by_json;
using views::number_or_null;
using views::point_json;
using views::pooled_json;
using views::testbed_json;

namespace {

std::string word(auto e) { return std::string(store::to_string(e)); }

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(std::string(store::to_string(*v))) : json(nullptr);
}

// The testbed a commit page shows: the one asked for, else that of the
// newest ok run with a testbed, else the first one its values name.
std::optional<store::TestbedId> pick_testbed(std::optional<store::TestbedId> asked,
                                             const std::vector<store::RunRecord>& runs,
                                             const std::vector<store::CommitSummaryRecord>& summaries) {
  if (asked) return asked;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    if (it->status == store::RunStatus::kOk && it->testbed_id) return it->testbed_id;
  if (!summaries.empty()) return summaries.front().testbed_id;
  return std::nullopt;
}

// The variants of the newest ok run (their params and which is the baseline).
std::vector<store::VariantRecord> newest_variants(store::Database& db, const std::vector<store::RunRecord>& runs) {
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->status != store::RunStatus::kOk) continue;
    auto v = store::RunReader(db).variants(it->id);
    if (v && !v->empty()) return *v;
  }
  return {};
}

// A commit's values of a metric judging did not pool: per variant x point the
// geometric mean of its run medians of that metric (analysis::commit_value),
// without a CI, on the testbed.
Result<std::vector<store::CommitSummaryRecord>> values_of_metric(store::Database& db, store::CommitId commit,
                                                                  store::TestbedId testbed, const std::string& metric) {
  auto rows = store::WebReader(db).metric_run_medians(commit, testbed, metric);
  if (!rows) return fail(rows.error());
  std::map<std::pair<std::string, store::PointId>, std::vector<double>> medians;
  for (const auto& r : *rows)
    if (r.median.median > 0) medians[{r.median.variant, r.median.point_id}].push_back(r.median.median);
  std::vector<store::CommitSummaryRecord> out;
  for (const auto& [key, values] : medians) {
    store::CommitSummaryRecord s;
    s.commit_id = commit;
    s.testbed_id = testbed;
    s.variant = key.first;
    s.point_id = key.second;
    s.metric = metric;
    s.runs = static_cast<std::int64_t>(values.size());
    s.geomean_of_run_medians = analysis::commit_value(values);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

Reply Api::repos(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  store::RepoReader reader(l.db());
  WEB_TRY_STORE(repos, reader.repos());
  json list = json::array();
  for (const auto& repo : repos) {
    WEB_TRY_STORE(branches, reader.branches(repo.id));
    json bs = json::array();
    for (const auto& b : branches)
      bs.push_back({{"name", b.name}, {"head_sha", b.head_sha}, {"updated_at", b.updated_at}});
    list.push_back({{"id", repo.id}, {"name", repo.name}, {"url", repo.url}, {"created_at", repo.created_at},
                    {"branches", std::move(bs)}});
  }
  return json{{"schema_version", kApiSchemaVersion}, {"repos", std::move(list)}};
}

Reply Api::commits(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "branch", "commit", "limit", "offset", "runs"});
  views::CommitsRequest r;
  r.repo = q.id("repo");
  r.branch = q.name("branch");
  r.commit = q.sha("commit");
  r.limit = static_cast<int>(q.integer("limit", r.limit, 1, views::kCommitsLimitMax));
  r.offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  r.runs = q.boolean("runs", false);
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::commits_view(l.db(), r));
  return views::commits_document(view);
}

Reply Api::commit(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "testbed", "basis", "metric"});
  auto asked_testbed = q.id("testbed");
  auto asked_metric = q.name("metric");
  std::string basis = q.word("basis", {"previous", "pinned"}).value_or("previous");
  WEB_CHECK_PARAMS(q);
  std::string sha = request.matches[1];
  std::transform(sha.begin(), sha.end(), sha.begin(), [](unsigned char ch) { return std::tolower(ch); });

  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  // One snapshot for the whole page, even while the daemon writes.
  store::Transaction snapshot(db, store::Transaction::Mode::kDeferred);
  if (!snapshot.status()) return std::unexpected(from_store(snapshot.status().error()));
  WEB_TRY(repo, resolve_repo(db, q));
  WEB_TRY(c, resolve_commit(db, repo.id, sha, "sha"));
  const store::CommitId effective = c.inherited_from.value_or(c.id);

  store::RunReader runs_reader(db);
  store::AnalysisReader analysis(db);
  WEB_TRY_STORE(builds, runs_reader.builds_of_commit(c.id));
  WEB_TRY_STORE(own_runs, runs_reader.runs_of_commit(c.id));
  WEB_TRY_STORE(effective_runs, runs_reader.runs_of_commit(effective));
  WEB_TRY_STORE(summaries, analysis.commit_summaries(effective));
  WEB_TRY_STORE(comparisons, analysis.comparisons_of_commit(effective));
  WEB_TRY_STORE(points, runs_reader.points());
  WEB_TRY_VIEW(facts, views::facts_of_commit(db, c));

  WEB_TRY_VIEW(metric, views::choose_metric(facts, asked_metric));

  auto testbed_id = pick_testbed(asked_testbed, effective_runs, summaries);
  json testbed = nullptr;
  if (testbed_id) {
    auto t = runs_reader.testbed(*testbed_id);
    if (!t) return std::unexpected(from_store(t.error(), "testbed"));
    testbed = testbed_json(*t);
  }
  // Another metric than the judged one: its values from the runs, and no
  // comparison (judging compared the judged metric only).
  if (!metric.judged) {
    comparisons.clear();
    summaries.clear();
    if (testbed_id) {
      WEB_TRY_STORE(values, values_of_metric(db, effective, *testbed_id, metric.name));
      summaries = std::move(values);
    }
  }

  // The table: variant x point, the commit's pooled value and its
  // comparison (of the chosen basis) at each cell.
  auto variants_of_run = newest_variants(db, effective_runs);
  std::set<std::string> names;
  std::set<store::PointId> point_ids;
  std::map<std::pair<std::string, store::PointId>, json> cells;
  auto cell = [&](const std::string& variant, store::PointId point) -> json& {
    names.insert(variant);
    point_ids.insert(point);
    auto& c = cells[{variant, point}];
    if (c.is_null())
      c = {{"variant", variant}, {"point_id", point}, {"value", nullptr}, {"comparison", nullptr}};
    return c;
  };
  for (const auto& s : summaries)
    if (testbed_id && s.testbed_id == *testbed_id) cell(s.variant, s.point_id)["value"] = pooled_json(s);
  std::optional<store::CommitId> against;
  for (const auto& cmp : comparisons) {
    if (!testbed_id || cmp.testbed_id != *testbed_id || std::string(store::to_string(cmp.basis)) != basis) continue;
    cell(cmp.variant, cmp.point_id)["comparison"] = comparison_json(cmp);
    if (!against) against = cmp.against_commit_id;
  }
  json variants = json::array();
  std::vector<std::string> ordered(names.begin(), names.end());
  auto is_baseline = [&](const std::string& name) {
    return std::any_of(variants_of_run.begin(), variants_of_run.end(),
                       [&](const auto& v) { return v.name == name && v.is_baseline; });
  };
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const auto& a, const auto& b) { return is_baseline(a) && !is_baseline(b); });
  for (const auto& n : ordered) variants.push_back({{"name", n}, {"is_baseline", is_baseline(n)}});
  json point_list = json::array();
  for (const auto& p : points)
    if (point_ids.count(p.id)) point_list.push_back(point_json(p));
  json cell_list = json::array();
  for (auto& [key, value] : cells) cell_list.push_back(std::move(value));

  json against_json = nullptr;
  if (against) {
    auto a = store::RepoReader(db).commit(*against);
    if (!a) return std::unexpected(from_store(a.error()));
    against_json = commit_brief(*a);
  }
  json inherited_json = nullptr;
  if (c.inherited_from) {
    auto a = store::RepoReader(db).commit(*c.inherited_from);
    if (!a) return std::unexpected(from_store(a.error()));
    inherited_json = commit_brief(*a);
  }

  store::FlagFilter ff;
  ff.commit_id = c.id;
  ff.limit = 500;
  WEB_TRY_STORE(flags, analysis.flags(ff));
  store::ExperimentFilter ef;
  ef.commit_id = effective;
  ef.limit = 100;
  WEB_TRY_STORE(experiments, store::ExperimentReader(db).search(ef));
  WEB_TRY_STORE(notes, store::RepoReader(db).annotations_of_commit(c.id));
  store::JobFilter jf;
  jf.repo_id = repo.id;
  jf.commit_sha = c.sha;
  jf.limit = 20;
  WEB_TRY_STORE(jobs, store::JobReader(db).jobs(jf));

  json out = {{"schema_version", kApiSchemaVersion},
              {"commit", commit_full(c, inherited_json.is_null() ? "" : inherited_json["sha"].get<std::string>())},
              {"inherited_from", inherited_json},
              {"testbed", testbed},
              {"basis", basis},
              {"against", against_json},
              {"builds", json::array()},
              {"runs", json::array()},
              {"table", {{"variants", variants}, {"points", point_list}, {"cells", cell_list}}},
              {"flags", json::array()},
              {"experiments", json::array()},
              {"annotations", json::array()},
              {"jobs", json::array()}};
  views::put_metric(out, metric, facts);
  for (const auto& b : builds) out["builds"].push_back(views::build_json(b));
  for (const auto& r : own_runs) out["runs"].push_back(views::run_json(r, false));
  std::map<store::PointId, std::string> labels;
  for (const auto& p : points) labels[p.id] = views::point_label(p);
  for (const auto& f : flags) out["flags"].push_back(views::flag_json(f, labels[f.flag.point_id]));
  for (const auto& e : experiments)
    out["experiments"].push_back({{"id", e.id}, {"hypothesis", e.hypothesis}, {"verdict", word(e.verdict)},
                                  {"source", word(e.source)}, {"candidates", e.candidates}});
  for (const auto& a : notes) out["annotations"].push_back(views::annotation_json(a));
  for (const auto& j : jobs) out["jobs"].push_back(views::job_json(j));
  return out;
}

Reply Api::series(const httplib::Request& request) {
  QueryParams q(request.params, {"repo"});
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  WEB_TRY(repo, resolve_repo(db, q));
  store::WebReader reader(db);
  WEB_TRY_STORE(variants, reader.variants_of_repo(repo.id));
  WEB_TRY_STORE(points, reader.points_of_repo(repo.id));
  WEB_TRY_STORE(testbeds, store::RunReader(db).testbeds());
  json out = {{"schema_version", kApiSchemaVersion},
              {"repo_id", repo.id},
              {"variants", json::array()},
              {"points", json::array()},
              {"testbeds", json::array()}};
  for (const auto& v : variants)
    out["variants"].push_back({{"name", v.name}, {"params", v.params}, {"is_baseline", v.is_baseline}, {"runs", v.runs}});
  for (const auto& p : points) out["points"].push_back(point_json(p));
  for (const auto& t : testbeds) out["testbeds"].push_back(testbed_json(t));
  return out;
}

Reply Api::ab(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "branch", "commit", "testbed", "baseline", "candidate", "metric"}, {"candidate"});
  auto sha = q.sha("commit");
  auto asked_metric = q.name("metric");
  auto asked_testbed = q.id("testbed");
  auto asked_baseline = q.name("baseline");
  auto asked_candidates = q.all_names("candidate");
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  store::Database& db = l.db();
  store::Transaction snapshot(db, store::Transaction::Mode::kDeferred);
  if (!snapshot.status()) return std::unexpected(from_store(snapshot.status().error()));
  WEB_TRY(repo, resolve_repo(db, q));
  std::string commit_sha;
  if (sha) {
    commit_sha = *sha;
  } else {
    // The newest commit of the branch that has results (own or inherited):
    // the head may still be queued or running.
    WEB_TRY(branch, resolve_branch(db, repo, q));
    WEB_TRY_STORE(recent, store::HistoryReader(db).commits({repo.id, branch.name, branch.head_sha}, 100, 0));
    for (const auto& o : recent) {
      auto ok = o.runs_by_status.find(store::RunStatus::kOk);
      if (o.commit.inherited_from || (ok != o.runs_by_status.end() && ok->second > 0)) {
        commit_sha = o.commit.sha;
        break;
      }
    }
    if (commit_sha.empty())
      return std::unexpected(not_found("commit", "no commit of the last 100 on " + branch.name + " has results yet"));
  }
  WEB_CHECK_PARAMS(q);
  WEB_TRY(c, resolve_commit(db, repo.id, commit_sha, "commit"));
  const store::CommitId effective = c.inherited_from.value_or(c.id);
  store::RunReader runs_reader(db);
  WEB_TRY_STORE(runs, runs_reader.runs_of_commit(effective));
  WEB_TRY_STORE(summaries, store::AnalysisReader(db).commit_summaries(effective));
  WEB_TRY_STORE(points, runs_reader.points());
  WEB_TRY_VIEW(facts, views::facts_of_commit(db, c));
  WEB_TRY_VIEW(metric, views::choose_metric(facts, asked_metric));
  auto testbed_id = pick_testbed(asked_testbed, runs, summaries);
  auto variants = newest_variants(db, runs);
  if (!metric.judged) {
    summaries.clear();
    if (testbed_id) {
      WEB_TRY_STORE(values, values_of_metric(db, effective, *testbed_id, metric.name));
      summaries = std::move(values);
    }
  }

  // The baseline: asked for, else the runs' baseline variant.
  std::string baseline;
  if (asked_baseline) {
    baseline = *asked_baseline;
  } else {
    for (const auto& v : variants)
      if (v.is_baseline) baseline = v.name;
  }
  std::map<std::string, const store::VariantRecord*> by_name;
  for (const auto& v : variants) by_name[v.name] = &v;
  std::set<std::string> measured;
  for (const auto& s : summaries)
    if (testbed_id && s.testbed_id == *testbed_id) measured.insert(s.variant);
  if (asked_baseline && !measured.count(baseline) && !by_name.count(baseline))
    return std::unexpected(not_found("baseline", "variant '" + baseline + "': not measured at this commit"));
  std::vector<std::string> candidates;
  if (!asked_candidates.empty()) {
    for (const auto& name : asked_candidates) {
      if (!measured.count(name) && !by_name.count(name))
        return std::unexpected(not_found("candidate", "variant '" + name + "': not measured at this commit"));
      candidates.push_back(name);
    }
  } else {
    for (const auto& v : variants)
      if (v.name != baseline) candidates.push_back(v.name);
    for (const auto& name : measured)
      if (name != baseline && !by_name.count(name)) candidates.push_back(name);
  }

  // Paired evidence of the commit's experiments whose baseline is this
  // variant: candidate -> point -> row, with the experiment it came from.
  store::ExperimentFilter ef;
  ef.commit_id = effective;
  ef.limit = 100;
  store::ExperimentReader experiments(db);
  WEB_TRY_STORE(found, experiments.search(ef));
  std::map<std::string, std::map<store::PointId, store::EvidenceRecord>> evidence;
  std::map<std::string, json> experiment_of;
  for (const auto& e : found) {
    if (!e.baseline.is_object() || e.baseline.value("variant", std::string()) != baseline) continue;
    if (!metric.judged || (!e.metric.empty() && e.metric != metric.name)) continue;  // evidence of another metric
    if (testbed_id && e.testbed_id && *e.testbed_id != *testbed_id) continue;
    WEB_TRY_STORE(detail, experiments.experiment(e.id));
    for (const auto& row : detail.evidence) {
      if (!evidence[row.evidence.candidate].count(row.evidence.point_id))
        evidence[row.evidence.candidate][row.evidence.point_id] = row.evidence;
      if (!experiment_of.count(row.evidence.candidate))
        experiment_of[row.evidence.candidate] = {
            {"id", e.id}, {"verdict", word(e.verdict)}, {"hypothesis", e.hypothesis}, {"conclusion", e.conclusion}};
    }
  }

  std::map<std::pair<std::string, store::PointId>, const store::CommitSummaryRecord*> value;
  std::set<store::PointId> point_ids;
  for (const auto& s : summaries) {
    if (!testbed_id || s.testbed_id != *testbed_id) continue;
    value[{s.variant, s.point_id}] = &s;
    point_ids.insert(s.point_id);
  }
  json rows = json::array();
  for (const auto& p : points) {
    if (!point_ids.count(p.id)) continue;
    const auto* base = value.count({baseline, p.id}) ? value[{baseline, p.id}] : nullptr;
    json cells = json::array();
    for (const auto& name : candidates) {
      const auto* cand = value.count({name, p.id}) ? value[{name, p.id}] : nullptr;
      json cell = {{"candidate", name},
                   {"value", cand ? pooled_json(*cand) : json(nullptr)},
                   {"delta_rel", nullptr},
                   {"band_rel", nullptr},
                   {"p_value", nullptr},
                   {"runs", nullptr},
                   {"verdict", nullptr},
                   {"from", nullptr},
                   {"judged_by", nullptr}};
      if (auto e = evidence.find(name); e != evidence.end() && e->second.count(p.id)) {
        const auto& row = e->second.at(p.id);
        cell["delta_rel"] = number_or_null(row.delta_rel);
        cell["band_rel"] = number_or_null(row.band_rel);
        cell["p_value"] = number_or_null(row.p_value);
        cell["runs"] = row.runs;
        cell["verdict"] = word(row.verdict);
        cell["from"] = "experiment";
        // The A/B of a commit's variants is paired: each run measures both.
        cell["judged_by"] = judged_by_json(row.band_rel, row.band_calibrated, true);
      } else if (auto delta = analysis::delta_rel(cand ? std::optional(cand->geomean_of_run_medians) : std::nullopt,
                                                  base ? std::optional(base->geomean_of_run_medians) : std::nullopt)) {
        cell["delta_rel"] = *delta;
        cell["from"] = "pooled_values";
      }
      cells.push_back(std::move(cell));
    }
    rows.push_back({{"point", point_json(p)}, {"baseline", base ? pooled_json(*base) : json(nullptr)},
                    {"cells", std::move(cells)}});
  }
  json candidate_list = json::array();
  for (const auto& name : candidates) {
    json params = by_name.count(name) ? by_name[name]->params : json::object();
    candidate_list.push_back({{"name", name},
                              {"params", params},
                              {"experiment", experiment_of.count(name) ? experiment_of[name] : json(nullptr)}});
  }
  json baseline_params = by_name.count(baseline) ? by_name[baseline]->params : json::object();
  json out = {{"schema_version", kApiSchemaVersion},
              {"commit", commit_brief(c)},
              {"testbed_id", testbed_id ? json(*testbed_id) : json(nullptr)},
              {"baseline", {{"name", baseline}, {"params", baseline_params}}},
              {"candidates", std::move(candidate_list)},
              {"rows", std::move(rows)}};
  views::put_metric(out, metric, facts);
  return out;
}

}  // namespace perfwatch::web
