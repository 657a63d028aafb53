#include "daemon/run_values.h"

#include <algorithm>

namespace perfwatch::daemon {

std::map<Cell, std::vector<double>> CommitRuns::values() const {
  std::map<Cell, std::vector<std::pair<store::RunId, double>>> sorted;
  for (const auto& m : medians) sorted[{m.variant, m.point_id}].emplace_back(m.run_id, m.median);
  std::map<Cell, std::vector<double>> out;
  for (auto& [cell, runs] : sorted) {
    std::sort(runs.begin(), runs.end());
    auto& v = out[cell];
    for (const auto& r : runs) v.push_back(r.second);
  }
  return out;
}

std::map<store::RunId, std::map<Cell, double>> CommitRuns::by_run() const {
  std::map<store::RunId, std::map<Cell, double>> out;
  for (const auto& m : medians) out[m.run_id][{m.variant, m.point_id}] = m.median;
  return out;
}

std::set<store::RunId> CommitRuns::run_ids() const {
  std::set<store::RunId> out;
  for (const auto& m : medians) out.insert(m.run_id);
  return out;
}

Result<CommitRuns> commit_runs(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                               store::RunKind kind, const std::optional<std::set<store::RunId>>& only) {
  auto medians = store::AnalysisReader(db).run_medians(commit, testbed, kind);
  if (!medians) return fail(medians.error());
  CommitRuns out;
  for (auto& m : *medians) {
    // A run median of 0 or less has no log: the metric is a time or a rate.
    if (!(m.median > 0)) continue;
    if (only && !only->count(m.run_id)) continue;
    out.medians.push_back(std::move(m));
  }
  return out;
}

}  // namespace perfwatch::daemon
