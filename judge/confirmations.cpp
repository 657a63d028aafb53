#include "judge/confirmations.h"

#include <cmath>
#include <cstdlib>

#include "analysis/follow_up.h"
#include "store/history_store.h"

namespace perfwatch::judge {

using nlohmann::json;

json ConfirmRequest::to_json() const {
  return json{{"variant", cell.variant},
              {"point", point_key},
              {"change_point",
               {{"commit", change_point_sha},
                {"p_value", change_point.p_value},
                {"rel_change", change_point.rel_change()},
                {"mean_before", change_point.mean_before},
                {"mean_after", change_point.mean_after}}}};
}

std::map<std::string, json> confirm_options(const std::vector<ConfirmRequest>& requests) {
  std::map<std::string, json> out;
  for (const auto& r : requests) {
    json& o = out[r.sha];
    if (o.is_null()) o = json{{"confirm", json::array()}};
    o["confirm"].push_back(r.to_json());
  }
  return out;
}

namespace {

bool persistent(const analysis::ChangePoint& cp, const std::vector<analysis::ChangePoint>& before) {
  for (const auto& b : before) {
    if (std::abs(b.index - cp.index) <= 1) return true;
  }
  return false;
}

}  // namespace

Result<std::vector<ConfirmRequest>> unexplained_change_points(store::Database& db, Bands& bands,
                                                              const ChangePointScope& scope,
                                                              const std::vector<Cell>& cells, PointNames& names) {
  std::vector<ConfirmRequest> out;
  store::HistoryReader history(db);
  const store::CommitRecord& head = scope.head;
  const store::TestbedId testbed = scope.testbed;
  analysis::RunBudget confirm_budget;
  confirm_budget.max_runs = scope.max_processes;
  confirm_budget.max_runs_confirm = scope.max_processes;
  const analysis::ChangePointOptions options;
  for (const Cell& cell : cells) {
    store::HistoryQuery q;
    q.start.repo_id = scope.repo;
    q.start.head_sha = head.sha;
    q.variant = cell.variant;
    q.point_key = names.key(cell.point);
    q.testbed_id = testbed;
    q.limit = scope.window;
    q.kinds = {store::RunKind::kBench};
    auto h = history.point_history(q);
    if (!h) return fail(h.error());

    // One value per measured commit of its own (inheriting commits repeat
    // their parent's value and would fake a plateau).
    std::vector<const store::HistoryEntry*> entries;
    std::vector<double> series;
    for (const auto& e : h->entries) {
      if (e.inherited_from || !e.pooled || e.runs.empty()) continue;
      entries.push_back(&e);
      series.push_back(e.pooled->geomean_of_run_medians);
    }
    if (static_cast<int>(series.size()) < 2 * options.min_segment + 1) continue;
    const std::vector<analysis::ChangePoint> cps = analysis::find_change_points(series, options);
    if (cps.empty()) continue;
    const std::vector<double> earlier(series.begin(), series.end() - 1);
    const std::vector<analysis::ChangePoint> cps_before = analysis::find_change_points(earlier, options);

    std::vector<std::vector<double>> run_medians;
    for (const auto* e : entries) {
      std::vector<double> v;
      for (const auto& r : e->runs) v.push_back(r.median);
      run_medians.push_back(std::move(v));
    }
    for (std::size_t i = 0; i < cps.size(); ++i) {
      if (!persistent(cps[i], cps_before)) continue;
      // E-Divisive is scale-free: on a history of (nearly) equal values it
      // can split on rounding. A step smaller than the smallest effect worth
      // more runs (ComparePolicy::min_effect_rel) is not followed up.
      if (!(std::abs(cps[i].rel_change()) >= scope.policy.min_effect_rel)) continue;
      // Each commit's comparison with its predecessor in this series: fresh
      // from the runs (the stored ones may predate runs added since).
      std::vector<analysis::Comparison> comparisons(entries.size());
      for (std::size_t k = 1; k < entries.size(); ++k) {
        auto band = bands.band(testbed, cell.variant, cell.point, false,
                               {commit_source(entries[k - 1]->commit_id), commit_source(entries[k]->commit_id)});
        if (!band) return fail(band.error());
        comparisons[k] = analysis::compare_runs(run_medians[k - 1], run_medians[k], *band, scope.direction,
                                                scope.policy);
      }
      for (int k : analysis::commits_to_reopen(cps, i, run_medians, comparisons)) {
        if (k < 1) continue;
        const analysis::RunRequest more = analysis::confirmation_runs(comparisons[k], confirm_budget);
        if (more.add_a == 0 && more.add_b == 0) continue;  // at budget: nothing more to learn there
        // Nor where both commits have had every process the manifest allows.
        auto a_processes = bench_processes(db, entries[k - 1]->commit_id, testbed);
        auto b_processes = bench_processes(db, entries[k]->commit_id, testbed);
        if (!a_processes) return fail(a_processes.error());
        if (!b_processes) return fail(b_processes.error());
        if (*a_processes >= scope.max_processes && *b_processes >= scope.max_processes) continue;
        ConfirmRequest r;
        r.sha = entries[k]->sha;
        r.cell = cell;
        r.point_key = q.point_key;
        r.change_point = cps[i];
        r.change_point_sha = entries[cps[i].index]->sha;
        out.push_back(std::move(r));
        break;  // one commit at a time; the next look moves on if this one is not it
      }
    }
  }
  return out;
}

}  // namespace perfwatch::judge
