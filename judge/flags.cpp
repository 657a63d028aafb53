#include "judge/flags.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "store/analysis_store.h"

namespace perfwatch::judge {

using nlohmann::json;

const char* to_string(FlagEvent::What what) {
  switch (what) {
    case FlagEvent::What::kRaised: return "raised";
    case FlagEvent::What::kRefreshed: return "refreshed";
    case FlagEvent::What::kWithdrawn: return "withdrawn";
    case FlagEvent::What::kReinstated: return "reinstated";
  }
  return "raised";
}

std::string rejudged_reason(const analysis::Comparison& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "re-judged with %d vs %d runs: %s, %+.1f%% (band +-%.1f%%, p = %.2g)", c.runs_a,
                c.runs_b, analysis::to_string(c.verdict), 100 * c.delta_rel(), 100 * c.band_rel, c.p_value);
  return buf;
}

std::string flag_verdict(const store::FlagRecord& f) {
  if (f.kind == store::FlagKind::kRegression) return "regression";
  if (f.kind == store::FlagKind::kImprovement) return "improvement";
  const auto it = f.detail.find("verdict");
  if (it == f.detail.end() || !it->is_string()) return "";
  const std::string v = it->get<std::string>();
  return v == "regression" || v == "improvement" ? v : "";
}

namespace {

bool is_step_kind(store::FlagKind kind) { return kind != store::FlagKind::kDrift; }

json evidence(const analysis::Comparison& c, const std::string& against, std::string_view basis) {
  json d = json::object();
  d["verdict"] = analysis::to_string(c.verdict);
  d["against"] = against;
  d["basis"] = basis;
  d["ratio"] = c.ratio;
  d["ci"] = {c.ci_low, c.ci_high};
  d["p_value"] = c.p_value;
  d["band_rel"] = c.band_rel;
  d["band_calibrated"] = c.band_calibrated;
  d["runs"] = c.runs_b;
  d["against_runs"] = c.runs_a;
  return d;
}

std::optional<store::ComparisonId> id_or_none(store::ComparisonId id) {
  if (id == 0) return std::nullopt;
  return id;
}

Result<std::vector<store::FlagRecord>> cell_flags(store::Database& db, const FlagScope& scope, const Cell& cell) {
  store::FlagFilter f;
  f.commit_id = scope.commit;
  f.testbed_id = scope.testbed;
  f.variant = cell.variant;
  f.point_id = cell.point;
  auto views = store::AnalysisReader(db).flags(f);
  if (!views) return fail(views.error());
  std::vector<store::FlagRecord> out;
  for (auto& v : *views) out.push_back(std::move(v.flag));
  return out;
}

// The flag of these kinds to update: the standing one, else the newest withdrawn one.
const store::FlagRecord* pick(const std::vector<store::FlagRecord>& flags, bool step_kinds) {
  const store::FlagRecord* out = nullptr;
  for (const auto& f : flags) {
    if (is_step_kind(f.kind) != step_kinds) continue;
    if (f.standing()) return &f;
    if (!out) out = &f;
  }
  return out;
}

// Writes a flag, reusing (and reinstating) one of its kind that was withdrawn.
Result<FlagEvent> raise(store::Database& db, store::FlagRecord f, const analysis::Comparison& comparison) {
  store::AnalysisWriter writer(db);
  auto raised = writer.raise_flag(f);
  if (!raised) return fail(raised.error());
  FlagEvent e;
  e.what = raised->created ? FlagEvent::What::kRaised : FlagEvent::What::kReinstated;
  if (!raised->created) {
    // The unique row of this kind existed (withdrawn, or raised by an older build): make it stand.
    if (auto s = writer.update_flag(raised->id, f.magnitude_rel, f.comparison_id, f.detail); !s) return fail(s.error());
  }
  auto stored = store::AnalysisReader(db).flag(raised->id);
  if (!stored) return fail(stored.error());
  e.flag = stored->flag;
  e.comparison = comparison;
  return e;
}

Result<FlagEvent> refresh(store::Database& db, const store::FlagRecord& old, double magnitude,
                          std::optional<store::ComparisonId> comparison_id, const json& detail,
                          const analysis::Comparison& comparison) {
  if (auto s = store::AnalysisWriter(db).update_flag(old.id, magnitude, comparison_id, detail); !s) return fail(s.error());
  auto stored = store::AnalysisReader(db).flag(old.id);
  if (!stored) return fail(stored.error());
  return FlagEvent{old.standing() ? FlagEvent::What::kRefreshed : FlagEvent::What::kReinstated, stored->flag,
                   comparison, ""};
}

Result<FlagEvent> withdraw(store::Database& db, const store::FlagRecord& old, const std::string& reason,
                           const analysis::Comparison& comparison) {
  if (auto s = store::AnalysisWriter(db).withdraw_flag(old.id, reason); !s) return fail(s.error());
  auto stored = store::AnalysisReader(db).flag(old.id);
  if (!stored) return fail(stored.error());
  return FlagEvent{FlagEvent::What::kWithdrawn, stored->flag, comparison, reason};
}

}  // namespace

Result<std::vector<FlagEvent>> judge_step_flags(store::Database& db, const FlagScope& scope,
                                                std::span<const CellComparison> cells,
                                                const std::map<Cell, json>& change_points,
                                                std::string_view basis, const json& extra) {
  std::vector<FlagEvent> out;
  auto keep = [&](Result<FlagEvent> e) -> Status {
    if (!e) return fail(e.error());
    out.push_back(std::move(*e));
    return {};
  };
  for (const CellComparison& c : cells) {
    auto flags = cell_flags(db, scope, c.cell);
    if (!flags) return fail(flags.error());
    const store::FlagRecord* step = pick(*flags, /*step_kinds=*/true);
    const store::FlagRecord* drift = pick(*flags, /*step_kinds=*/false);
    const auto verdict = c.comparison.verdict;
    const std::string said = analysis::to_string(verdict);

    const bool own = step && step->detail.value("basis", "previous") == basis;
    if (!is_change(verdict)) {
      if (step && step->standing() && own) {
        if (auto s = keep(withdraw(db, *step, rejudged_reason(c.comparison), c.comparison)); !s) return fail(s.error());
      }
      continue;
    }

    json detail = evidence(c.comparison, scope.against_sha, basis);
    if (extra.is_object()) {
      for (const auto& [key, value] : extra.items()) {
        if (!detail.contains(key)) detail[key] = value;
      }
    }
    const auto cp = change_points.find(c.cell);
    if (cp != change_points.end()) detail["change_point"] = cp->second;
    std::optional<store::FlagId> step_id;
    if (step && flag_verdict(*step) == said) {
      // The same step seen again: its flag takes the new evidence (and keeps
      // what a change point said of it).
      if (!detail.contains("change_point") && step->detail.contains("change_point"))
        detail["change_point"] = step->detail["change_point"];
      if (auto s = keep(refresh(db, *step, c.comparison.delta_rel(), id_or_none(c.id), detail, c.comparison)); !s)
        return fail(s.error());
      step_id = step->id;
    } else {
      if (step && step->standing() && !own) continue;  // another look's flag says otherwise: it stands
      if (step && step->standing()) {
        if (auto s = keep(withdraw(db, *step, rejudged_reason(c.comparison), c.comparison)); !s) return fail(s.error());
      }
      store::FlagRecord f;
      f.commit_id = scope.commit;
      f.testbed_id = scope.testbed;
      f.variant = c.cell.variant;
      f.point_id = c.cell.point;
      f.kind = cp != change_points.end()                       ? store::FlagKind::kChangepoint
               : verdict == analysis::ChangeVerdict::kRegression ? store::FlagKind::kRegression
                                                                 : store::FlagKind::kImprovement;
      f.magnitude_rel = c.comparison.delta_rel();
      f.comparison_id = id_or_none(c.id);
      f.detail = detail;
      auto e = raise(db, f, c.comparison);
      if (!e) return fail(e.error());
      step_id = e->flag.id;
      out.push_back(std::move(*e));
    }
    if (drift && drift->standing()) {
      const std::string why = "explained by the step flagged at this commit (flag " + std::to_string(*step_id) + ")";
      if (auto s = keep(withdraw(db, *drift, why, c.comparison)); !s) return fail(s.error());
    }
  }
  return out;
}

Result<std::vector<FlagEvent>> raise_drift_flag(store::Database& db, const FlagScope& scope, const Cell& cell,
                                                const analysis::Comparison& comparison,
                                                std::optional<store::ComparisonId> comparison_id,
                                                double unexplained_rel, json detail) {
  auto flags = cell_flags(db, scope, cell);
  if (!flags) return fail(flags.error());
  const store::FlagRecord* step = pick(*flags, /*step_kinds=*/true);
  if (step && step->standing()) return std::vector<FlagEvent>{};  // the step says it already
  const json measured = evidence(comparison, scope.against_sha, detail.value("basis", "drift"));
  for (const auto& [key, value] : measured.items()) {
    if (!detail.contains(key)) detail[key] = value;
  }
  std::vector<FlagEvent> out;
  if (const store::FlagRecord* drift = pick(*flags, /*step_kinds=*/false)) {
    auto e = refresh(db, *drift, unexplained_rel, comparison_id, detail, comparison);
    if (!e) return fail(e.error());
    out.push_back(std::move(*e));
    return out;
  }
  store::FlagRecord f;
  f.commit_id = scope.commit;
  f.testbed_id = scope.testbed;
  f.variant = cell.variant;
  f.point_id = cell.point;
  f.kind = store::FlagKind::kDrift;
  f.magnitude_rel = unexplained_rel;
  f.comparison_id = comparison_id;
  f.detail = std::move(detail);
  auto e = raise(db, f, comparison);
  if (!e) return fail(e.error());
  out.push_back(std::move(*e));
  return out;
}

Result<FlagEvent> extend_drift_flag(store::Database& db, const store::FlagRecord& flag, double total_rel,
                                    const std::string& through_sha, const analysis::Comparison& comparison) {
  json detail = flag.detail;
  if (!detail.contains("first_rel")) detail["first_rel"] = flag.magnitude_rel;
  detail["through"] = through_sha;
  detail["through_ratio"] = comparison.ratio;
  detail["through_p_value"] = comparison.p_value;
  return refresh(db, flag, total_rel, flag.comparison_id, detail, comparison);
}

}  // namespace perfwatch::judge
