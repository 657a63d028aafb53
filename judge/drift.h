// Drift: a slide of small steps, each within the band of its own comparison
// with the previous commit, that together left the band. Each commit's
// comparison with its predecessor cannot see it (+0.5% a commit is noise
// there), and change points inside a slide point at commits whose own step
// is too small to confirm, so a drift is judged against a reference that
// stays put while the cell slides:
//
//   - the pinned baseline, when the manifest names one: the commit's
//     comparison with it says a change that the standing flags since the pin
//     do not explain (its log ratio, less the log changes those flags
//     recorded, is still outside the band in the same direction);
//   - otherwise the cell's level: the runs of the first kLevelCommits measured
//     commits from the cell's newest standing flag on (or from the start of
//     the window), pooled, so the reference is steadier than one commit's
//     runs. The head is compared with it once it lies at least one commit past
//     the level; a change there is a drift (no flag since the level explains
//     anything: the level starts at the newest one).
//
// What moved is told by where it started (the hinge fit): at the head
// itself, it is a step that the head's own comparison was too weak to see
// (the reference has more runs): a step flag at the head, basis level or
// pinned; one to kMissedStepSpan commits back, a step the comparisons
// missed there: nothing is flagged late here, the step's commit is confirmed
// (its comparison grows) so that it is flagged where it happened; further
// back, a slide: a drift flag.
//
// Either way one slide gets one flag. The flag is raised at the commit where
// the slide left the band; it becomes the newest flag of the cell, so the
// level starts again there, and for the pinned baseline it explains the
// change it flagged from then on. While the cell keeps sliding the same way
// (a new finding within kExtendCommits measured commits of the flag's last
// commit, no step flag between), the finding extends that flag -- its
// magnitude grows to the whole slide and `through` names the newest commit
// -- instead of raising another. Its detail names the reference, where the
// slide started (analysis/drift.h's hinge fit over the pooled values since
// the reference) and where it left the band.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "common/result.h"
#include "judge/bands.h"
#include "judge/commit_runs.h"
#include "judge/comparisons.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::judge {

inline constexpr int kLevelCommits = 3;
inline constexpr int kExtendCommits = 12;
inline constexpr int kMissedStepSpan = 3;

using DriftScope = HistoryScope;

struct Drift {
  enum class Shape { kStepAtHead, kMissedStep, kSlide };
  Shape shape = Shape::kSlide;
  std::string started_at;  // the commit where the change started (the hinge fit)
  Cell cell;
  analysis::Comparison comparison;             // head against the reference
  std::optional<store::ComparisonId> comparison_id;  // the stored one (pinned)
  double unexplained_rel = 0;                  // the part no standing flag explains
  nlohmann::json detail;                       // basis, reference, started_at, left_band_at, ...
  // The drift flag this finding continues: its magnitude becomes total_rel.
  std::optional<store::FlagRecord> extends;
  double total_rel = 0;
};

// Drifts of these cells against their level (no pinned baseline).
Result<std::vector<Drift>> level_drifts(store::Database& db, Bands& bands, const DriftScope& scope,
                                        const std::vector<Cell>& cells, PointNames& names);

}  // namespace perfwatch::judge
