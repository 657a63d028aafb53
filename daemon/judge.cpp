#include "daemon/judge.h"

#include <algorithm>
#include <cmath>

#include "analysis/significance.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

analysis::Direction direction_of(const runner::Manifest& manifest) {
  return manifest.metric.direction == runner::Direction::kHigherIsBetter ? analysis::Direction::kHigherIsBetter
                                                                          : analysis::Direction::kLowerIsBetter;
}

store::ChangeVerdict to_store(analysis::ChangeVerdict verdict) {
  switch (verdict) {
    case analysis::ChangeVerdict::kRegression: return store::ChangeVerdict::kRegression;
    case analysis::ChangeVerdict::kImprovement: return store::ChangeVerdict::kImprovement;
    case analysis::ChangeVerdict::kWithinNoise: return store::ChangeVerdict::kWithinNoise;
    case analysis::ChangeVerdict::kUndecided: return store::ChangeVerdict::kUndecided;
  }
  return store::ChangeVerdict::kUndecided;
}

std::string PointNames::key(store::PointId point) {
  if (auto it = keys_.find(point); it != keys_.end()) return it->second;
  auto p = store::RunReader(db_).point(point);
  std::string key = p ? p->key : "point " + std::to_string(point);
  keys_[point] = key;
  return key;
}

Status store_commit_summaries(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                              const std::string& metric, const CommitRuns& runs) {
  store::AnalysisWriter writer(db);
  for (const auto& [cell, values] : runs.values()) {
    std::vector<double> logs;
    for (double v : values) logs.push_back(std::log(v));
    store::CommitSummaryRecord s;
    s.commit_id = commit;
    s.testbed_id = testbed;
    s.variant = cell.variant;
    s.point_id = cell.point;
    s.metric = metric;
    s.runs = static_cast<std::int64_t>(values.size());
    s.geomean_of_run_medians = analysis::commit_value(values);
    if (logs.size() >= 2) {
      const analysis::TTestResult t = analysis::one_sample_t_test(logs);
      const double half = t.ci_halfwidth(0.95);
      s.ci_low = std::exp(t.difference - half);
      s.ci_high = std::exp(t.difference + half);
    }
    if (auto st = writer.put_commit_summary(s); !st) return st;
  }
  return {};
}

Result<std::vector<CellComparison>> compare_commits(Bands& bands, store::TestbedId testbed, store::CommitId a,
                                                    const CommitRuns& a_runs, store::CommitId b,
                                                    const CommitRuns& b_runs, analysis::Direction direction,
                                                    const analysis::ComparePolicy& policy) {
  std::vector<CellComparison> out;
  const auto a_values = a_runs.values();
  const std::vector<std::string> exclude = {commit_source(a), commit_source(b)};
  for (const auto& [cell, b_values] : b_runs.values()) {
    auto it = a_values.find(cell);
    if (it == a_values.end()) continue;
    auto band = bands.band(testbed, cell.variant, cell.point, /*paired=*/false, exclude);
    if (!band) return fail(band.error());
    CellComparison c;
    c.cell = cell;
    c.a = it->second;
    c.b = b_values;
    c.comparison = analysis::compare_runs(c.a, c.b, *band, direction, policy);
    out.push_back(std::move(c));
  }
  return out;
}

Status store_comparisons(store::Database& db, store::CommitId b, store::CommitId a, store::ComparisonBasis basis,
                         store::TestbedId testbed, const std::string& metric, std::vector<CellComparison>& cells) {
  store::AnalysisWriter writer(db);
  store::Transaction tx(db);
  if (!tx.status()) return tx.status();
  for (auto& c : cells) {
    store::ComparisonRecord r;
    r.commit_id = b;
    r.against_commit_id = a;
    r.basis = basis;
    r.testbed_id = testbed;
    r.variant = c.cell.variant;
    r.point_id = c.cell.point;
    r.metric = metric;
    r.ratio = c.comparison.ratio;
    if (std::isfinite(c.comparison.ci_low)) r.ci_low = c.comparison.ci_low;
    if (std::isfinite(c.comparison.ci_high)) r.ci_high = c.comparison.ci_high;
    r.p_value = c.comparison.p_value;
    r.band_rel = c.comparison.band_rel;
    r.runs = c.comparison.runs_b;
    r.against_runs = c.comparison.runs_a;
    r.verdict = to_store(c.comparison.verdict);
    auto id = writer.put_comparison(r);
    if (!id) return fail(id.error());
    c.id = *id;
  }
  return tx.commit();
}

Result<std::vector<RaisedFlagInfo>> raise_flags(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                                                const std::string& against_sha,
                                                const std::vector<CellComparison>& cells,
                                                const std::map<Cell, nlohmann::json>& change_points,
                                                store::ComparisonBasis basis) {
  std::vector<RaisedFlagInfo> out;
  store::AnalysisWriter writer(db);
  for (const auto& c : cells) {
    const auto v = c.comparison.verdict;
    if (v != analysis::ChangeVerdict::kRegression && v != analysis::ChangeVerdict::kImprovement) continue;
    auto cp = change_points.find(c.cell);
    const bool by_change_point = cp != change_points.end();
    store::FlagRecord f;
    f.commit_id = commit;
    f.testbed_id = testbed;
    f.variant = c.cell.variant;
    f.point_id = c.cell.point;
    f.kind = by_change_point ? store::FlagKind::kChangepoint
             : v == analysis::ChangeVerdict::kRegression ? store::FlagKind::kRegression
                                                         : store::FlagKind::kImprovement;
    f.magnitude_rel = c.comparison.delta_rel();
    if (c.id) f.comparison_id = c.id;
    nlohmann::json d = nlohmann::json::object();
    if (by_change_point) d["change_point"] = cp->second;
    d["verdict"] = analysis::to_string(v);
    d["against"] = against_sha;
    d["basis"] = store::to_string(basis);
    d["ratio"] = c.comparison.ratio;
    d["ci"] = {c.comparison.ci_low, c.comparison.ci_high};
    d["p_value"] = c.comparison.p_value;
    d["band_rel"] = c.comparison.band_rel;
    d["band_calibrated"] = c.comparison.band_calibrated;
    d["runs"] = c.comparison.runs_b;
    d["against_runs"] = c.comparison.runs_a;
    f.detail = d;
    auto raised = writer.raise_flag(f);
    if (!raised) return fail(raised.error());
    f.id = raised->id;
    out.push_back({f, raised->created, &c});
  }
  return out;
}

std::vector<CellComparison> pinned_drift(const std::vector<CellComparison>& pinned,
                                         const std::vector<CellComparison>& previous,
                                         const std::vector<store::ComparisonRecord>& previous_pinned) {
  auto flagged = [](analysis::ChangeVerdict v) {
    return v == analysis::ChangeVerdict::kRegression || v == analysis::ChangeVerdict::kImprovement;
  };
  std::vector<CellComparison> out;
  for (const auto& c : pinned) {
    if (!flagged(c.comparison.verdict)) continue;
    const auto already = std::find_if(previous.begin(), previous.end(), [&](const CellComparison& p) {
      return p.cell == c.cell && p.comparison.verdict == c.comparison.verdict;
    });
    if (already != previous.end()) continue;
    const auto before = std::find_if(previous_pinned.begin(), previous_pinned.end(), [&](const store::ComparisonRecord& r) {
      return r.basis == store::ComparisonBasis::kPinned && r.variant == c.cell.variant && r.point_id == c.cell.point &&
             r.verdict == to_store(c.comparison.verdict);
    });
    if (before != previous_pinned.end()) continue;
    out.push_back(c);
  }
  return out;
}

}  // namespace perfwatch::daemon
