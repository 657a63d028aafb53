#include "judge/comparisons.h"

#include <algorithm>
#include <cmath>

#include "analysis/significance.h"
#include "store/analysis_store.h"

namespace perfwatch::judge {

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

bool is_change(analysis::ChangeVerdict verdict) {
  return verdict == analysis::ChangeVerdict::kRegression || verdict == analysis::ChangeVerdict::kImprovement;
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
                         store::TestbedId testbed, const std::string& metric, std::span<CellComparison> cells) {
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
    r.band_calibrated = c.comparison.band_calibrated;
    r.runs = c.comparison.runs_b;
    r.against_runs = c.comparison.runs_a;
    r.verdict = to_store(c.comparison.verdict);
    auto id = writer.put_comparison(r);
    if (!id) return fail(id.error());
    c.id = *id;
  }
  return tx.commit();
}

}  // namespace perfwatch::judge
