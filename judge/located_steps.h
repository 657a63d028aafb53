// Steps the commit comparisons missed, located over the cell's level.
//
// A commit compared with the previous one alone misses about half the 5%
// steps at 3% run noise within 8 runs a commit (analysis/step_location.h
// says why). Every later commit at the new level is more evidence of the
// same step, so after each commit the cell's stretch since its newest flag
// -- the level that flag started, and what came after -- is split where one
// step explains its runs best (analysis::locate_step). A step that is
// significant there (alpha over the splits tried), outside the band, clearly
// placed and not a slide is flagged at its own commit, basis `level`, with
// the runs before and after it as evidence; the commit comparisons never see
// it late at another commit. One whose place is not clear asks for more runs
// at its commit (a confirmation) while that commit has budget; a slide is
// drift.h's. So is a step after a drift flag the same way that is no larger
// than the band of a commit comparison (drift.h's drift_going_on): the rest
// of that slide, which extends the drift flag instead of raising a step flag.
//
// A located flag follows its evidence: while it is the cell's newest flag,
// each look judges it again on every run since (the level before it
// against every run from it on) and withdraws it when that no longer says
// the change.
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
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::judge {

// Log-likelihood by which a step's commit must beat its neighbours to be
// flagged while they could still get runs (about 20,000 to 1); once they
// are at their budget, the likeliest commit is flagged.
inline constexpr double kLocationMargin = 10.0;
// Log-likelihood by which a step must beat a slide, or a slide a step, to
// be called one (about 7 to 1). Between the two the stretch waits for more
// commits: after a step the level stays put, in a slide it goes on. Where
// the cell's newest flag is a drift the same way, an unclear change is the
// drift going on.
inline constexpr double kShapeMargin = 2.0;

struct LocatedStep {
  Cell cell;
  store::CommitId commit = 0;  // where the step is
  std::string sha;
  std::string reference_sha;        // the first commit of the level it left
  store::CommitId previous_commit = 0;  // the measured commits either side of it (0: none after)
  store::CommitId next_commit = 0;
  std::string next_sha;
  analysis::Comparison comparison;  // every run of that level against every run from the step on
  double location_margin = 0;       // analysis::StepSplit's
  enum class Shape { kStep, kSlide, kUnclear };
  Shape shape = Shape::kStep;       // what explains the runs (kSlide: drift.h's to flag)
  bool rejudged = false;            // a standing located flag judged again
  // kSlide because it is the drift flag that starts the stretch going on
  // (drift.h's drift_going_on): that flag, not a step flag, says it.
  bool drift_going_on = false;
  // That drift flag, when the step lies past its newest commit: extended to it.
  std::optional<store::FlagRecord> extends;
  nlohmann::json detail;            // basis, the commits on each side, location margin, splits tried
};

// For a cell whose history ends at scope.head: its standing located flag
// judged again, and a step newly located, if any.
Result<std::vector<LocatedStep>> locate_steps(Bands& bands, const HistoryScope& scope, const Cell& cell,
                                              const CellHistory& history);

}  // namespace perfwatch::judge
