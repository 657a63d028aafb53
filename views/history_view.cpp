#include "views/history_view.h"

#include <cmath>

#include "analysis/compare.h"
#include "analysis/delta.h"
#include "store/repo_store.h"
#include "views/fragments.h"
#include "views/json_writer.h"
#include "views/lookup.h"
#include "views/text_format.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

// The value of a commit the analysis has not pooled: the same statistic as
// a pooled one (analysis::commit_value), over the runs listed.
HistoryValue value_from_runs(const store::HistoryEntry& e) {
  HistoryValue v;
  std::vector<double> medians;
  for (const auto& r : e.runs) {
    if (!std::isfinite(r.median) || !(r.median > 0)) return v;  // no geometric mean of that
    medians.push_back(r.median);
  }
  if (medians.empty()) return v;
  v.geomean_of_run_medians = analysis::commit_value(medians);
  v.runs = static_cast<std::int64_t>(medians.size());
  return v;
}

}  // namespace

Result<HistoryView> history_view(store::Database& db, const HistoryRequest& request) {
  if (request.variant.empty()) return fail(invalid_argument("variant", "required: the variant to chart"));
  if (request.point.empty())
    return fail(invalid_argument("point", "required: the sweep point (its label, its key, or axes: batch=48,heads=16)"));
  if (request.limit < 1 || request.limit > kHistoryLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kHistoryLimitMax)));
  auto repo = resolve_repo(db, request.repo);
  if (!repo) return fail(repo.error());
  auto branch = resolve_branch(db, *repo, request.branch);
  if (!branch) return fail(branch.error());

  auto variant = resolve_variant(db, repo->id, request.variant);
  if (!variant) return fail(variant.error());
  auto point = resolve_point(db, repo->id, request.point);
  if (!point) return fail(point.error());

  store::HistoryQuery q;
  q.start = {repo->id, branch->name, branch->head_sha};
  q.variant = request.variant;
  q.point_key = point->key;
  q.testbed_id = request.testbed;
  q.limit = request.limit;
  q.metric = request.metric.value_or("");
  auto history = store::HistoryReader(db).point_history(q);
  if (!history) return fail(field_error(history.error(), "point"));

  HistoryView view;
  view.repo_id = repo->id;
  view.branch = branch->name;
  view.limit = request.limit;
  view.history = std::move(*history);
  for (const auto& e : view.history.entries) {
    if (e.pooled) {
      view.values.push_back({e.pooled->geomean_of_run_medians, e.pooled->ci_low, e.pooled->ci_high, true,
                             e.pooled->runs});
    } else {
      view.values.push_back(value_from_runs(e));
    }
  }
  // The metric and the default band from the newest measured commit's
  // manifest; with nothing measured (a metric no run summarised), the head's.
  std::optional<store::CommitId> newest;
  for (auto it = view.history.entries.rbegin(); it != view.history.entries.rend() && !newest; ++it)
    if (!it->runs.empty() || it->pooled) newest = it->inherited_from.value_or(it->commit_id);
  std::optional<store::CommitRecord> facts_commit;
  if (newest) {
    auto c = store::RepoReader(db).commit(*newest);
    if (!c) return fail(c.error());
    facts_commit = std::move(*c);
  } else if (!branch->head_sha.empty()) {
    auto c = store::RepoReader(db).find_commit(repo->id, branch->head_sha);
    if (c && *c) facts_commit = std::move(**c);
  }
  if (facts_commit) {
    auto facts = facts_of_commit(db, *facts_commit);
    if (!facts) return fail(facts.error());
    view.facts = std::move(*facts);
  }
  auto metric = choose_metric(view.facts, request.metric);
  if (!metric) return fail(metric.error());
  view.metric = std::move(*metric);
  // Judging measured a band for its own metric only.
  if (!view.metric.judged) view.history.band.reset();
  std::optional<double> previous;
  for (const auto& value : view.values) {
    view.deltas.push_back(analysis::delta_rel(value.geomean_of_run_medians, previous));
    if (value.geomean_of_run_medians) previous = value.geomean_of_run_medians;
  }
  return view;
}

std::string history_document(const HistoryView& v) {
  const store::PointHistory& h = v.history;
  std::string out;
  out.reserve(512 + h.entries.size() * 600);
  JsonWriter w(out);
  w.begin_object();
  w.key("schema_version").value(kSchemaVersion);
  w.key("repo_id").value(v.repo_id);
  w.key("branch").value(v.branch);
  w.key("variant").value(h.variant);
  w.key("point").value(point_json(h.point));
  w.key("testbed_id").value(h.testbed_id);
  w.key("metric").value(v.metric.name);
  w.key("unit").value(v.metric.unit);
  w.key("lower_is_better").value(v.metric.lower_is_better);
  w.key("judged_metric").value(v.facts.metric);
  w.key("metrics").value(declared_metrics_json(v.facts));
  w.key("statistic").value("geomean_of_run_medians");
  w.key("band").value(h.band ? band_json(*h.band) : default_band_json(v.facts.default_band_rel));
  w.key("limit").value(v.limit);
  w.key("entries").begin_array();
  for (std::size_t i = 0; i < h.entries.size(); ++i) {
    const store::HistoryEntry& e = h.entries[i];
    const HistoryValue& value = v.values[i];
    w.begin_object();
    w.key("commit_id").value(e.commit_id);
    w.key("sha").value(e.sha);
    w.key("short_sha").value(std::string_view(e.sha).substr(0, 10));
    w.key("subject").value(e.subject);
    w.key("author").value(e.author);
    w.key("committed_at").value(e.committed_at);
    w.key("inherited").value(e.inherited_from.has_value());
    w.key("pooled").value(value.pooled);
    w.key("geomean_of_run_medians").value(value.geomean_of_run_medians);
    w.key("ci_low").value(value.ci_low);
    w.key("ci_high").value(value.ci_high);
    w.key("delta_rel").value(v.deltas[i]);
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
    // How this commit was judged at this point: against its previous
    // measured commit, with the band and the test that decided it (the
    // chart shades each point's own band from here).
    w.key("judged");
    if (e.comparison) {
      const store::ComparisonRecord& c = *e.comparison;
      w.begin_object();
      w.key("verdict").value(store::to_string(c.verdict));
      w.key("delta_rel").value(analysis::delta_rel_of_ratio(c.ratio));
      w.key("p_value").value(c.p_value);
      w.key("runs").value(c.runs);
      w.key("against_runs").value(c.against_runs);
      w.key("against_commit_id").value(c.against_commit_id);
      // judged_by_json's fields, written straight (a history has 1000 of them).
      w.key("judged_by").begin_object();
      w.key("band_rel").value(c.band_rel);
      w.key("band").value(!c.band_calibrated ? "unknown" : *c.band_calibrated ? "measured" : "default");
      w.key("test");
      c.band_calibrated ? w.value(analysis::test_name(*c.band_calibrated)) : w.null();
      w.key("alpha").value(analysis::ComparePolicy{}.alpha);
      w.end_object();
      w.end_object();
    } else {
      w.null();
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return out;
}

std::string history_text(const HistoryView& v) {
  using namespace text;
  const store::PointHistory& h = v.history;
  std::string out = "history of " + h.variant + " at " + h.point.key + " (" + v.branch + ")";
  if (h.band) {
    out += "; band " + band(h.band->band_rel) + (h.band->calibrated ? " (calibrated: " : " (") + h.band->method + ")";
  } else {
    out += "; band " + band(v.facts.default_band_rel) + " (uncalibrated: the manifest's default)";
  }
  out += "\nvalue: the geometric mean of the commit's run medians (" + v.metric.name + ", " + v.metric.unit +
         "), with its 95% CI over runs; * = not judged yet (computed from the runs listed, no CI)\n";
  out += pad("commit", 12) + lpad("geomean", 11) + lpad("95% CI", 22) + lpad("runs", 6) + "  flag      subject\n";
  for (std::size_t i = 0; i < h.entries.size(); ++i) {
    const store::HistoryEntry& e = h.entries[i];
    const HistoryValue& value = v.values[i];
    std::string ci = "-";
    if (value.ci_low && value.ci_high) ci = "[" + number(value.ci_low) + ", " + number(value.ci_high) + "]";
    std::string shown = number(value.geomean_of_run_medians);
    if (value.geomean_of_run_medians && !value.pooled) shown += "*";
    std::string flag = e.flag ? std::string(store::to_string(e.flag->kind)) : "";
    std::string subject = e.subject;
    if (e.inherited_from) subject = "(inherits) " + subject;
    out += pad(e.sha.substr(0, 10), 12) + lpad(shown, 11) + lpad(ci, 22) + lpad(std::to_string(value.runs), 6) + "  " +
           pad(flag, 10) + subject + "\n";
  }
  if (h.entries.empty()) out += "(no measurement of this variant at this point on " + v.branch + ")\n";
  return out;
}

}  // namespace perfwatch::views
