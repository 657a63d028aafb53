// Flags: the changes worth a person's look, one per step, each only as good
// as its evidence.
//
//   - One step, one flag. A cell of a commit (testbed x variant x point)
//     holds at most one standing flag, whichever look found the step first:
//     the comparison with the previous commit (regression / improvement), a
//     change point's confirmation (changepoint), or drift from a reference
//     (drift, drift.h). A later look at the same cell refreshes the flag that
//     stands -- its id, kind, creation time and acknowledgement stay -- so a
//     confirmation never adds a second flag to a step already flagged.
//   - A flag follows its evidence. A step flag belongs to the comparison of
//     its commit with the previous one; whenever that comparison is judged
//     again (either commit got more runs), a verdict that no longer says the
//     same change withdraws the flag, with what the comparison says now; one
//     that says it again reinstates it. Nothing is deleted.
//   - A step explains a drift: a drift flag standing on a cell that a step
//     flag now covers is withdrawn in its favour.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "common/result.h"
#include "judge/commit_runs.h"
#include "judge/comparisons.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::judge {

// What judging did to one flag; the job loop announces these.
struct FlagEvent {
  enum class What { kRaised, kRefreshed, kWithdrawn, kReinstated };
  What what = What::kRaised;
  store::FlagRecord flag;           // as stored now
  analysis::Comparison comparison;  // the evidence behind the event
  std::string reason;               // for kWithdrawn: why
};
const char* to_string(FlagEvent::What what);  // "raised", "refreshed", "withdrawn", "reinstated"

// Whose comparison this is: commit (B) compared with `against` (A).
struct FlagScope {
  store::CommitId commit = 0;
  store::TestbedId testbed = 0;
  std::string against_sha;
};

// Judges the flags of a comparison of `scope.commit` with its previous
// commit, cell by cell: a change raises a flag (kind changepoint for the
// cells of `change_points`, which E-Divisive pointed at -- cell -> what it
// said, kept in the detail) or refreshes the standing one; no change
// withdraws a standing step flag.
// `basis`: what the commit was compared with -- "previous", or "level" /
// "pinned" for a step that only the steadier reference could see (drift.h);
// a look withdraws only the flags of its own basis. `extra`: more of what
// the look saw, kept in each flag's detail (located_steps.h: the commits on
// each side of the step).
Result<std::vector<FlagEvent>> judge_step_flags(store::Database& db, const FlagScope& scope,
                                                std::span<const CellComparison> cells,
                                                const std::map<Cell, nlohmann::json>& change_points = {},
                                                std::string_view basis = "previous",
                                                const nlohmann::json& extra = nlohmann::json::object());

// A drift of `cell` found at scope.commit (drift.h says when): raises a drift
// flag of magnitude `unexplained_rel` (the change no standing flag explains),
// or refreshes the one that stands. `detail` says where it started and what
// it is measured against; no flag is raised where a step flag stands.
Result<std::vector<FlagEvent>> raise_drift_flag(store::Database& db, const FlagScope& scope, const Cell& cell,
                                                const analysis::Comparison& comparison,
                                                std::optional<store::ComparisonId> comparison_id,
                                                double unexplained_rel, nlohmann::json detail);

// The drift flag `flag` continues at `through_sha` (drift.h): its magnitude
// becomes the whole slide, `total_rel`; its detail says through which commit.
Result<FlagEvent> extend_drift_flag(store::Database& db, const store::FlagRecord& flag, double total_rel,
                                    const std::string& through_sha, const analysis::Comparison& comparison);

// The direction a flag says: "regression" or "improvement" -- its kind, or
// for the kinds that carry none (changepoint, drift) the verdict kept in its
// detail; "" when it says neither.
std::string flag_verdict(const store::FlagRecord& flag);

// "re-judged with 8 vs 8 runs: within_noise, +1.2% (band +-2.9%, p = 0.03)"
std::string rejudged_reason(const analysis::Comparison& comparison);

}  // namespace perfwatch::judge
