#include "judge/cell_history.h"

#include <cmath>

#include "analysis/compare.h"
#include "analysis/drift.h"

namespace perfwatch::judge {

Result<CellHistory> CellHistory::read(store::Database& db, const HistoryScope& scope, const Cell& cell,
                                      PointNames& names) {
  store::HistoryQuery q;
  q.start.repo_id = scope.repo;
  q.start.head_sha = scope.head.sha;
  q.variant = cell.variant;
  q.point_key = names.key(cell.point);
  q.testbed_id = scope.testbed;
  q.limit = scope.window;
  q.kinds = {store::RunKind::kBench};
  auto h = store::HistoryReader(db).point_history(q);
  if (!h) return fail(h.error());
  CellHistory out;
  out.history_ = std::move(*h);
  for (const auto& e : out.history_.entries) {
    if (!e.inherited_from && !e.runs.empty()) out.measured_.push_back(&e);
  }
  return out;
}

std::vector<double> CellHistory::medians(const store::HistoryEntry& e) {
  std::vector<double> out;
  for (const auto& r : e.runs) {
    if (r.median > 0) out.push_back(r.median);
  }
  return out;
}

std::vector<std::vector<double>> CellHistory::medians(std::size_t from, std::size_t to) const {
  std::vector<std::vector<double>> out;
  for (std::size_t i = from; i < to && i < measured_.size(); ++i) out.push_back(medians(*measured_[i]));
  return out;
}

std::size_t CellHistory::slide_start(std::size_t from) const {
  std::vector<double> logs;
  for (std::size_t i = from; i < measured_.size(); ++i) {
    auto m = medians(*measured_[i]);
    logs.push_back(m.empty() ? 0.0 : std::log(analysis::commit_value(m)));
  }
  return from + static_cast<std::size_t>(analysis::slide_start(logs));
}

}  // namespace perfwatch::judge
