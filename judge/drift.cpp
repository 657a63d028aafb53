#include "judge/drift.h"

#include <cmath>

#include "analysis/distributions.h"
#include "analysis/drift.h"
#include "store/history_store.h"

namespace perfwatch::judge {

using nlohmann::json;

namespace {

// The cell's measured commits of the window, oldest first (inheriting commits
// repeat their parent's runs and would fake a plateau).
class CellHistory {
 public:
  static Result<CellHistory> read(store::Database& db, const DriftScope& scope, const Cell& cell, PointNames& names) {
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

  const std::vector<const store::HistoryEntry*>& measured() const { return measured_; }
  // Whether the newest measured commit is the head (else the head was not measured here).
  bool ends_at(store::CommitId head) const { return !measured_.empty() && measured_.back()->commit_id == head; }

  static std::vector<double> medians(const store::HistoryEntry& e) {
    std::vector<double> out;
    for (const auto& r : e.runs) {
      if (r.median > 0) out.push_back(r.median);
    }
    return out;
  }

  // The index of the commit where the slide over measured()[from..] started.
  std::size_t slide_start(std::size_t from) const {
    std::vector<double> logs;
    for (std::size_t i = from; i < measured_.size(); ++i) {
      auto m = medians(*measured_[i]);
      logs.push_back(m.empty() ? 0.0 : std::log(analysis::commit_value(m)));
    }
    return from + static_cast<std::size_t>(analysis::slide_start(logs));
  }

  // Where a change found at the head started, and so what it is.
  void place(Drift& d, std::size_t from) const {
    const std::size_t start = slide_start(from), head = measured_.size() - 1;
    d.started_at = measured_[start]->sha;
    d.shape = start == head                                          ? Drift::Shape::kStepAtHead
              : head - start <= static_cast<std::size_t>(kMissedStepSpan) ? Drift::Shape::kMissedStep
                                                                           : Drift::Shape::kSlide;
  }

 private:
  store::PointHistory history_;
  std::vector<const store::HistoryEntry*> measured_;
};

double log_change(double rel) { return rel > -1 ? std::log1p(rel) : 0.0; }

// The standard error of a log ratio from its 95% interval, read as normal:
// the interval is a t interval, so this overstates the error (a conservative
// drift test). 0 when there is no interval.
double log_se(double low, double high) {
  if (!(low > 0) || !(high > low) || !std::isfinite(high)) return 0.0;
  return (std::log(high) - std::log(low)) / (2 * 1.959964);
}
double log_se(const nlohmann::json& ci) {
  if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) return 0.0;
  return log_se(ci[0].get<double>(), ci[1].get<double>());
}

// The drift flag at measured()[at] that a finding in `verdict`'s direction at
// the head continues, if it is one: standing, the same direction, and its
// newest commit (`through`, else its own) at most kExtendCommits back.
std::optional<store::FlagRecord> continued(const std::vector<const store::HistoryEntry*>& es, std::size_t at,
                                           analysis::ChangeVerdict verdict) {
  const auto& flag = es[at]->flag;
  if (!flag || flag->kind != store::FlagKind::kDrift || !flag->standing()) return std::nullopt;
  if (flag->detail.value("verdict", "") != analysis::to_string(verdict)) return std::nullopt;
  const std::string through = flag->detail.value("through", es[at]->sha);
  for (std::size_t i = es.size(); i-- > at;) {
    if (es[i]->sha == through) {
      if (es.size() - 1 - i <= static_cast<std::size_t>(kExtendCommits)) return flag;
      break;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<Drift>> level_drifts(store::Database& db, Bands& bands, const DriftScope& scope,
                                        const std::vector<Cell>& cells, PointNames& names) {
  std::vector<Drift> out;
  for (const Cell& cell : cells) {
    auto history = CellHistory::read(db, scope, cell, names);
    if (!history) return fail(history.error());
    if (!history->ends_at(scope.head.id)) continue;
    const auto& es = history->measured();
    const std::size_t head = es.size() - 1;
    if (es[head]->flag && es[head]->flag->kind != store::FlagKind::kDrift) continue;  // its step says it already
    std::size_t level = 0;
    for (std::size_t i = head; i-- > 0;) {
      if (es[i]->flag) {
        level = i;
        break;
      }
    }
    // The level's commits, and at least one between them and the head (the
    // head's step from its predecessor is the step comparison's business).
    if (level + kLevelCommits + 1 > head) continue;
    std::vector<double> reference;
    json reference_shas = json::array();
    std::vector<std::string> exclude = {commit_source(scope.head.id)};
    for (std::size_t i = level; i < level + kLevelCommits; ++i) {
      for (double v : CellHistory::medians(*es[i])) reference.push_back(v);
      reference_shas.push_back(es[i]->sha);
      exclude.push_back(commit_source(es[i]->commit_id));
    }
    const std::vector<double> head_values = CellHistory::medians(*es[head]);
    if (reference.empty() || head_values.empty()) continue;
    auto band = bands.band(scope.testbed, cell.variant, cell.point, /*paired=*/false, exclude);
    if (!band) return fail(band.error());
    const analysis::Comparison c = analysis::compare_runs(reference, head_values, *band, scope.direction, scope.policy);
    if (!is_change(c.verdict)) continue;
    Drift d;
    d.cell = cell;
    d.comparison = c;
    d.unexplained_rel = c.delta_rel();
    history->place(d, level);
    if ((d.extends = continued(es, level, c.verdict))) {
      d.total_rel = (1 + d.extends->detail.value("first_rel", d.extends->magnitude_rel)) * (1 + c.delta_rel()) - 1;
    }
    d.detail = {{"basis", "level"},
                {"reference", reference_shas},
                {"started_at", d.started_at},
                {"left_band_at", scope.head.sha},
                {"commits", static_cast<int>(head - level)}};
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<Drift>> pinned_drifts(store::Database& db, const DriftScope& scope,
                                         const store::CommitRecord& pinned,
                                         const std::vector<CellComparison>& pinned_cells, PointNames& names) {
  std::vector<Drift> out;
  for (const CellComparison& c : pinned_cells) {
    if (!is_change(c.comparison.verdict)) continue;
    auto history = CellHistory::read(db, scope, c.cell, names);
    if (!history) return fail(history.error());
    if (!history->ends_at(scope.head.id)) continue;
    const auto& es = history->measured();
    // The flags since the pin explain that much of the change; a pin older
    // than the window counts the window's flags.
    std::size_t from = 0;
    for (std::size_t i = 0; i < es.size(); ++i) {
      if (es[i]->commit_id == pinned.id) from = i + 1;
    }
    // The unexplained part is a difference of estimates: its error is the
    // comparison's and each flag's together, and it must be significant on
    // that error as well as outside the band (a flag's estimate that was a
    // little low must not read as drift later).
    double explained = 0;
    double variance = std::pow(log_se(c.comparison.ci_low, c.comparison.ci_high), 2);
    for (std::size_t i = from; i < es.size(); ++i) {
      const bool own_drift = i + 1 == es.size() && es[i]->flag && es[i]->flag->kind == store::FlagKind::kDrift;
      if (!es[i]->flag || own_drift) continue;
      explained += log_change(es[i]->flag->magnitude_rel);
      variance += std::pow(log_se(es[i]->flag->detail.value("ci", nlohmann::json())), 2);
    }
    const double total = std::log(c.comparison.ratio);
    const double unexplained = total - explained;
    const double band = log_change(c.comparison.band_rel);
    if (!(std::abs(unexplained) > band) || (unexplained > 0) != (total > 0)) continue;
    // Without intervals to go on (runs that agree exactly), the comparison's own test stands.
    const double p = variance > 0 ? 2 * (1 - analysis::normal_cdf(std::abs(unexplained) / std::sqrt(variance)))
                                  : c.comparison.p_value;
    if (!(p < scope.policy.alpha)) continue;
    Drift d;
    d.cell = c.cell;
    d.comparison = c.comparison;
    if (c.id) d.comparison_id = c.id;
    d.unexplained_rel = std::expm1(unexplained);
    history->place(d, from > 0 ? from - 1 : 0);
    for (std::size_t i = es.size(); i-- > from;) {
      if (!es[i]->flag || i + 1 == es.size()) continue;
      if ((d.extends = continued(es, i, c.comparison.verdict))) {
        d.total_rel = std::expm1(log_change(d.extends->magnitude_rel) + unexplained);
      }
      break;  // only the newest flag since the pin can be continued
    }
    d.detail = {{"basis", "pinned"},
                {"reference", json::array({pinned.sha})},
                {"explained_rel", std::expm1(explained)},
                {"unexplained_p_value", p},
                {"started_at", d.started_at},
                {"left_band_at", scope.head.sha},
                {"commits", static_cast<int>(es.size() - from)}};
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace perfwatch::judge
