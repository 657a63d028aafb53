#include "judge/commit_runs.h"

#include <algorithm>

#include "store/run_store.h"

namespace perfwatch::judge {

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

std::string PointNames::key(store::PointId point) {
  if (auto it = keys_.find(point); it != keys_.end()) return it->second;
  auto p = store::RunReader(db_).point(point);
  std::string key = p ? p->key : "point " + std::to_string(point);
  keys_[point] = key;
  return key;
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

Result<int> bench_processes(store::Database& db, store::CommitId commit, std::optional<store::TestbedId> testbed) {
  auto runs = store::RunReader(db).runs_of_commit(commit);
  if (!runs) return fail(runs.error());
  int n = 0;
  for (const auto& r : *runs) {
    if (r.kind != store::RunKind::kBench || r.status == store::RunStatus::kCutOff || r.status == store::RunStatus::kLost)
      continue;
    n += !testbed || !r.testbed_id || *r.testbed_id == *testbed;
  }
  return n;
}

}  // namespace perfwatch::judge
