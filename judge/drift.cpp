#include "judge/drift.h"

#include <cmath>

#include "judge/cell_history.h"
#include "store/history_store.h"

namespace perfwatch::judge {

using nlohmann::json;

namespace {

// Where a change found at the head started, and so what it is.
void place(const CellHistory& history, Drift& d, std::size_t from) {
  const auto& measured = history.measured();
  const std::size_t start = history.slide_start(from), head = measured.size() - 1;
  d.started_at = measured[start]->sha;
  d.shape = start == head                                          ? Drift::Shape::kStepAtHead
            : head - start <= static_cast<std::size_t>(kMissedStepSpan) ? Drift::Shape::kMissedStep
                                                                         : Drift::Shape::kSlide;
}

// The drift flag at measured()[at] that a finding in `verdict`'s direction at
// the head continues, if it is one: standing, the same direction, and its
// newest commit (`through`, else its own) at most kExtendCommits back.
std::optional<store::FlagRecord> continued(const std::vector<const store::HistoryEntry*>& es, std::size_t at,
                                           analysis::ChangeVerdict verdict) {
  const auto& flag = es[at]->flag;
  if (!flag || flag->kind != store::FlagKind::kDrift || !flag->standing()) return std::nullopt;
  if (flag->detail.value("verdict", "") != analysis::to_string(verdict)) return std::nullopt;
  if (recent_drift(es, at)) return flag;
  return std::nullopt;
}

}  // namespace

std::size_t drift_through(const std::vector<const store::HistoryEntry*>& measured, std::size_t at) {
  const auto& flag = measured[at]->flag;
  const std::string through = flag ? flag->detail.value("through", measured[at]->sha) : measured[at]->sha;
  for (std::size_t i = measured.size(); i-- > at;) {
    if (measured[i]->sha == through) return i;
  }
  return at;  // `through` not measured here: the flag's own commit
}

bool recent_drift(const std::vector<const store::HistoryEntry*>& measured, std::size_t at) {
  const auto& flag = measured[at]->flag;
  if (!flag || flag->kind != store::FlagKind::kDrift || !flag->standing()) return false;
  const std::string through = flag->detail.value("through", measured[at]->sha);
  for (std::size_t i = measured.size(); i-- > at;) {
    if (measured[i]->sha == through) return measured.size() - 1 - i <= static_cast<std::size_t>(kExtendCommits);
  }
  return false;
}

bool drift_going_on(int commits_after, double step_rel, double margin_rel) {
  if (commits_after > kExtendCommits) return false;
  return std::fabs(std::log1p(step_rel)) <= std::log1p(margin_rel);
}

Result<std::optional<Drift>> level_drift(Bands& bands, const DriftScope& scope, const Cell& cell,
                                         const CellHistory& history) {
  const std::optional<Drift> none;
  if (!history.ends_at(scope.head.id)) return none;
  const auto& es = history.measured();
  const std::size_t head = es.size() - 1;
  if (es[head]->flag && es[head]->flag->kind != store::FlagKind::kDrift) return none;  // its step says it already
  std::size_t level = 0;
  for (std::size_t i = head; i-- > 0;) {
    if (es[i]->flag) {
      level = i;
      break;
    }
  }
  // The level's commits, and at least one between them and the head (the
  // head's step from its predecessor is the step comparison's business).
  if (level + kLevelCommits + 1 > head) return none;
  std::vector<double> reference;
  json reference_shas = json::array();
  std::vector<std::string> exclude = {commit_source(scope.head.id)};
  for (std::size_t i = level; i < level + kLevelCommits; ++i) {
    for (double v : CellHistory::medians(*es[i])) reference.push_back(v);
    reference_shas.push_back(es[i]->sha);
    exclude.push_back(commit_source(es[i]->commit_id));
  }
  const std::vector<double> head_values = CellHistory::medians(*es[head]);
  if (reference.empty() || head_values.empty()) return none;
  auto band = bands.band(scope.testbed, cell.variant, cell.point, /*paired=*/false, exclude);
  if (!band) return fail(band.error());
  const analysis::Comparison c = analysis::compare_runs(reference, head_values, *band, scope.direction, scope.policy);
  if (!is_change(c.verdict)) return none;
  Drift d;
  d.cell = cell;
  d.comparison = c;
  d.unexplained_rel = c.delta_rel();
  place(history, d, level);
  if ((d.extends = continued(es, level, c.verdict))) {
    d.total_rel = (1 + d.extends->detail.value("first_rel", d.extends->magnitude_rel)) * (1 + c.delta_rel()) - 1;
  }
  d.detail = {{"basis", "level"},
              {"reference", reference_shas},
              {"started_at", d.started_at},
              {"left_band_at", scope.head.sha},
              {"commits", static_cast<int>(head - level)}};
  return d;
}

}  // namespace perfwatch::judge
