#include "judge/located_steps.h"

#include <cmath>
#include <limits>

#include "analysis/step_location.h"
#include "judge/cell_history.h"
#include "judge/comparisons.h"
#include "judge/drift.h"

namespace perfwatch::judge {

using nlohmann::json;

namespace {

bool located(const store::FlagRecord& flag) {
  return flag.kind != store::FlagKind::kDrift && flag.detail.value("basis", "") == "level";
}

class Looker {
 public:
  Looker(Bands& bands, const HistoryScope& scope, const Cell& cell, const CellHistory& history)
      : bands_(bands), scope_(scope), cell_(cell), es_(history.measured()), history_(history) {}

  // The band for the runs of measured()[from..]: their own evidence left out (bands.h).
  Result<analysis::NoiseBand> band(std::size_t from) {
    std::vector<std::string> exclude;
    for (std::size_t i = from; i < es_.size(); ++i) exclude.push_back(commit_source(es_[i]->commit_id));
    return bands_.band(scope_.testbed, cell_.variant, cell_.point, /*paired=*/false, exclude);
  }

  LocatedStep step(std::size_t from, std::size_t at, const analysis::Comparison& c) const {
    LocatedStep s;
    s.cell = cell_;
    s.commit = es_[at]->commit_id;
    s.sha = es_[at]->sha;
    s.reference_sha = es_[from]->sha;
    s.comparison = c;
    s.detail = {{"basis", "level"},
                {"before", {es_[from]->sha, es_[at - 1]->sha}},
                {"after", {es_[at]->sha, es_.back()->sha}},
                {"commits_before", static_cast<int>(at - from)},
                {"commits_after", static_cast<int>(es_.size() - at)}};
    return s;
  }

  // The located flag at measured()[at] judged again over measured()[from..].
  Result<LocatedStep> rejudge(std::size_t from, std::size_t at) {
    auto b = band(from);
    if (!b) return fail(b.error());
    const auto runs = history_.medians(from, es_.size());
    const auto c = analysis::compare_split(runs, static_cast<int>(at - from), *b, scope_.direction, scope_.policy);
    LocatedStep s = step(from, at, c);
    s.rejudged = true;
    return s;
  }

  // A step newly located over measured()[from..], if one is found.
  Result<std::optional<LocatedStep>> locate(std::size_t from) {
    const auto runs = history_.medians(from, es_.size());
    auto b = band(from);
    if (!b) return fail(b.error());
    const auto split = analysis::locate_step(runs, *b, scope_.direction, scope_.policy);
    if (!split || !is_change(split->comparison.verdict)) return std::optional<LocatedStep>();
    const std::size_t at = from + static_cast<std::size_t>(split->index);
    LocatedStep s = step(from, at, split->comparison);
    s.location_margin = split->location_margin;
    // A slide explains it better; or the cell's newest flag is a drift the
    // same way, and no clear step beats the drift going on; or the step is
    // no larger than the band and lies within that drift's reach: its tail.
    const auto& newest = es_[from]->flag;
    const bool same_way =
        newest && newest->detail.value("verdict", "") == analysis::to_string(split->comparison.verdict);
    const bool drifting = same_way && recent_drift(es_, from);
    if (same_way && newest->kind == store::FlagKind::kDrift && newest->standing()) {
      const std::size_t through = drift_through(es_, from);
      s.drift_going_on = judge::drift_going_on(static_cast<int>(at) - static_cast<int>(through),
                                               split->comparison.delta_rel(), split->comparison.margin_rel);
      if (s.drift_going_on && at > through) s.extends = *newest;
    }
    const double m = split->slide_margin;
    s.shape = m >= kShapeMargin && !s.drift_going_on ? LocatedStep::Shape::kStep
              : m <= -kShapeMargin || drifting || s.drift_going_on ? LocatedStep::Shape::kSlide
                                                                    : LocatedStep::Shape::kUnclear;
    s.detail["over_slide"] = split->slide_margin;
    if (at + 1 < es_.size()) s.next_sha = es_[at + 1]->sha, s.next_commit = es_[at + 1]->commit_id;
    s.previous_commit = es_[at - 1]->commit_id;
    s.detail["location_margin"] =
        std::isfinite(split->location_margin) ? json(split->location_margin) : json("unique");
    s.detail["splits_tried"] = split->candidates;
    return std::optional<LocatedStep>(std::move(s));
  }

 private:
  Bands& bands_;
  const HistoryScope& scope_;
  const Cell& cell_;
  const std::vector<const store::HistoryEntry*>& es_;
  const CellHistory& history_;
};

}  // namespace

Result<std::vector<LocatedStep>> locate_steps(Bands& bands, const HistoryScope& scope, const Cell& cell,
                                              const CellHistory& history) {
  std::vector<LocatedStep> out;
  if (!history.ends_at(scope.head.id)) return out;
  const auto& es = history.measured();
  const std::size_t head = es.size() - 1;
  // The head's own comparison found its step: nothing before it is new.
  if (es[head]->flag && es[head]->flag->kind != store::FlagKind::kDrift && !located(*es[head]->flag)) return out;

  // The newest flag and the one before it start the stretches looked at.
  std::vector<std::size_t> flagged;
  for (std::size_t i = 0; i < es.size(); ++i) {
    if (es[i]->flag) flagged.push_back(i);
  }
  const std::size_t newest = flagged.empty() ? 0 : flagged.back();
  const std::size_t before = flagged.size() >= 2 ? flagged[flagged.size() - 2] : 0;

  Looker looker(bands, scope, cell, history);
  std::size_t from = newest;
  store::CommitId rejudged = 0;
  if (!flagged.empty() && located(*es[newest]->flag) && newest > before) {
    auto again = looker.rejudge(before, newest);
    if (!again) return fail(again.error());
    rejudged = again->commit;
    if (!is_change(again->comparison.verdict)) from = before;  // withdrawn: its stretch is looked at whole
    out.push_back(std::move(*again));
  }
  auto found = looker.locate(from);
  if (!found) return fail(found.error());
  if (*found && (*found)->commit != rejudged) out.push_back(std::move(**found));
  return out;
}

}  // namespace perfwatch::judge
