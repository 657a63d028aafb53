// Drift: a slide of small steps, each within the band of its own comparison
// with the previous commit, that together left the band. Each commit's
// comparison with its predecessor cannot see it (+0.5% a commit is noise
// there), so a drift is judged against a reference that stays put while the
// cell slides: the cell's level, the runs of the first kLevelCommits
// measured commits from its newest standing flag on (or from the start of
// the window), pooled. The head is compared with it once it lies at least
// one commit past the level. The judge asks only about cells whose stretch
// since that flag a slide explains better than one step
// (located_steps.h), so the two looks agree on what moved.
//
// What moved is told by where it started (the hinge fit): one to
// kMissedStepSpan commits back or at the head it is too near to call a
// slide (Drift::Shape says so, and nothing is flagged); further back, a
// drift flag.
//
// One slide gets one flag. The flag is raised at the commit where the slide
// left the band; it becomes the newest flag of the cell, so the level
// starts again there. While the cell keeps sliding the same way (a new
// finding within kExtendCommits measured commits of the flag's last commit,
// no step flag between), the finding extends that flag
// -- its magnitude grows to the whole slide and `through` names the newest
// commit -- instead of raising another. Its detail names the reference,
// where the slide started (analysis/drift.h's hinge fit over the pooled
// values since the reference) and where it left the band.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "common/result.h"
#include "judge/bands.h"
#include "judge/cell_history.h"
#include "judge/commit_runs.h"
#include "judge/comparisons.h"
#include "store/database.h"
#include "store/history_store.h"
#include "store/records.h"

namespace perfwatch::judge {

inline constexpr int kLevelCommits = 3;
inline constexpr int kExtendCommits = 12;
inline constexpr int kMissedStepSpan = 3;

using DriftScope = HistoryScope;

struct Drift {
  // Where the hinge fit says the change started: at the head, up to
  // kMissedStepSpan commits back (too near to call a slide), or further.
  enum class Shape { kStepAtHead, kMissedStep, kSlide };
  Shape shape = Shape::kSlide;
  std::string started_at;  // the commit where the change started (the hinge fit)
  Cell cell;
  analysis::Comparison comparison;             // head against the reference
  std::optional<store::ComparisonId> comparison_id;  // a stored comparison behind it, if any
  double unexplained_rel = 0;                  // the change against the level
  nlohmann::json detail;                       // basis, reference, started_at, left_band_at, ...
  // The drift flag this finding continues: its magnitude becomes total_rel.
  std::optional<store::FlagRecord> extends;
  double total_rel = 0;
};

// Whether measured[at] holds a standing drift flag whose newest commit
// (`through`, else its own) is at most kExtendCommits before the newest of
// `measured`: a slide that may still be going on.
bool recent_drift(const std::vector<const store::HistoryEntry*>& measured, std::size_t at);

// The index in `measured` of the newest commit of the drift flag at
// measured[at] (`through`, else its own commit).
std::size_t drift_through(const std::vector<const store::HistoryEntry*>& measured, std::size_t at);

// Whether a step located after a standing drift flag, the same way, is that
// drift going on rather than a step of its own: it lies at most
// kExtendCommits measured commits after the drift's newest commit
// (`commits_after`; negative: before it) and it is no larger than the
// within-noise margin of a commit comparison (`margin_rel`:
// analysis::Comparison's, the "+-x%" of the band the dashboard shows).
//
// Why by size: after a drift is flagged where it left the band, the rest of
// the slide and its end (level, ramp, level) split into a "before" and an
// "after" that differ by a percent or two, and with every run since the
// flag as evidence (a hundred and more) that difference is significant and
// fits a step better than a slide that goes on to the head; by shape alone
// it is a step. By size it is not: no larger than what noise does between
// two commits' standard measurements, where a step the commit comparisons
// flag is larger (issue 9's are 5%). In judging_e2e (seed 3, budget 12) such
// tails measured +1.5..2.7% at 2% run noise, the margins about +-3.2% (2%)
// and +-4.8% (3%), the real steps located after a drift +5.3% and +5.7%. The
// risk: at 3% noise a step of just the margin's size, right after a drift
// the same way and missed by its own comparison, is taken for the drift
// (one step in 223 over seeds 2 and 3). A stricter shape bar for steps
// inside a drift was tried and lost more (judging_e2e.md).
bool drift_going_on(int commits_after, double step_rel, double margin_rel);

// The drift of a cell against its level, if its history ends at scope.head
// and the head left the level's band.
Result<std::optional<Drift>> level_drift(Bands& bands, const DriftScope& scope, const Cell& cell,
                                         const CellHistory& history);

}  // namespace perfwatch::judge
