// Which side of a comparison needs how many more runs, at which points: the
// run plan. Pure: it sees comparisons and counts, never git, a process or
// the database, so the policy is tested directly.
//
// A routine look grows the cells that are undecided (analysis::more_runs:
// 3 -> 6 -> 12 runs a side, balanced, A B A B), and those that say a change
// on fewer than runs_to_flag runs a side (a 5% step at 3% noise is
// significant on 3 runs a side by chance about as often as by merit, and a
// flag is read as a claim); a confirmation grows the
// cells a change point asked about, whatever they say short of a change
// (analysis::confirmation_runs). How many more processes a side gets is
// what its neediest cell asks for; each of them measures every point (with
// every_point, the default) or only the points that asked (every variant
// there, so the paired variant A/B keeps its pairs).
//
// The budget is a hard cap on bench processes per commit: the manifest's
// runs.max_per_commit bounds every process a commit ever gets -- its first
// runs, its growth as the commit judged, its growth as the previous commit
// of the next one, confirmations. A side at its cap, or whose build is not
// at hand, gets nothing; the comparison is then judged with what there is.
#pragma once

#include <set>
#include <span>

#include "analysis/compare.h"
#include "judge/commit_runs.h"

namespace perfwatch::judge {

struct CellLook {
  Cell cell;
  analysis::Comparison comparison;
};

struct SideBudget {
  int processes = 0;      // bench processes the commit has had, every job's, failed ones too
  int max_processes = 8;  // runs.max_per_commit
  bool can_run = true;    // its build is at hand (the previous commit's may be gone)

  int left() const { return can_run && max_processes > processes ? max_processes - processes : 0; }
};

struct PlanRequest {
  std::span<const CellLook> cells;
  SideBudget a;  // the reference (previous commit)
  SideBudget b;  // the commit judged
  bool confirm = false;         // a change point's confirmation ...
  std::set<Cell> confirm_cells; // ... of these cells
  double growth = 2.0;          // each look multiplies the runs a side by this
  // A change seen on fewer runs a side than this is measured again before
  // it is flagged: its flag then rests on both looks.
  int runs_to_flag = 6;
  // A process that runs measures every point, not only the ones that asked
  // for it: the budget counts processes, and a cell left at 3 runs beside
  // commits of 8 is where a step found later cannot be placed.
  bool every_point = true;
};

struct SidePlan {
  int runs = 0;                      // more bench processes
  std::set<store::PointId> points;   // the points they measure
};

struct RunPlan {
  SidePlan a, b;
  int undecided = 0;  // cells undecided now
  bool done() const { return a.runs == 0 && b.runs == 0; }
};

RunPlan plan_runs(const PlanRequest& request);

}  // namespace perfwatch::judge
