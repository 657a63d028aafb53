// Scoring: what perfwatch recorded about a history against what was true.
// A cell is a variant at a batch size; "at commit i" means the flag names the
// i-th commit of the history.
//
//   step found      a flag (open, any kind) on the step's cell at the step's
//                   commit whose change has the step's sign
//   false flag      an open flag on a cell at a commit where that cell's truth
//                   did not change, outside the drift window (the drift's
//                   commits and the 2 after them); late flags of a step count
//   unchanged comparison
//                   a row of `comparisons` (basis previous or pinned) of a cell
//                   at a commit where its truth did not change, outside the
//                   drift window: the denominator of false flags
//   drift flagged   a drift cell with at least one open flag inside its window
//   duplicate       each flag beyond the first on one cell of one commit
//   stale flag      an open flag whose recorded evidence (detail.runs,
//                   detail.against_runs) is fewer runs than the database now
//                   holds for that cell of its commit or of the commit it was
//                   compared against
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/judging_e2e/history.h"
#include "benchmarks/judging_e2e/observed.h"

namespace judging_e2e {

struct Score {
  int histories = 0;
  int commits = 0;
  int failed_watches = 0;       // perfwatch watch did not exit 0

  int steps = 0, steps_found = 0, steps_wrong_sign = 0;
  int flags_on_found_steps = 0; // all flags on the cell at the step's commit, for found steps
  int late_step_flags = 0;      // flags on a step's cell 1-2 commits after it (counted as false too)

  int unchanged_comparisons = 0, unchanged_comparisons_previous = 0, unchanged_comparisons_pinned = 0;
  int false_flags = 0;
  int false_flags_previous = 0, false_flags_pinned = 0, false_flags_changepoint = 0;

  int drift_cells = 0, drift_cells_flagged = 0, drift_flags = 0;
  int drift_cells_as_drift = 0;  // with a flag of kind drift among the drift's flags
  int late_drift_flags = 0;      // drift flags after the window that name a start inside it (the drift's, not false)
  int blip_cells = 0, blip_cells_flagged = 0, blip_flags = 0, blip_changepoint_flags = 0;

  int flags = 0, flags_acknowledged = 0, duplicate_flags = 0, stale_flags = 0;

  int runs = 0, runs_max = 0, commits_over_budget = 0;
  int max_per_commit = 0;       // the manifest's budget
  double wall_s = 0, wall_s_max = 0;

  void add(const Score& other);
  nlohmann::json to_json() const;
  // The counts back from to_json's document (for --render).
  static Score from_json(const nlohmann::json& document);
};

Score score_history(const History& history, const std::vector<std::string>& shas, const Observed& observed,
                    int max_per_commit);

}  // namespace judging_e2e

namespace judging_e2e {

// What makes a history's figures meaningless, if anything: a commit without
// a run, a cell of a commit never compared with its predecessor. Empty when
// the counts hold together (the smoke test asserts this, not the figures).
std::vector<std::string> consistency_problems(const History& history, const std::vector<std::string>& shas,
                                              const Observed& observed);

}  // namespace judging_e2e
