#include "judge/run_plan.h"

#include <algorithm>

namespace perfwatch::judge {

RunPlan plan_runs(const PlanRequest& request) {
  // Per cell, analysis/compare.h says how far each side should grow; a cell's
  // runs can never exceed its commit's processes, so the cap per cell is the
  // cap per commit.
  analysis::RunBudget per_cell;
  per_cell.max_runs = std::max(request.a.max_processes, request.b.max_processes);
  per_cell.max_runs_confirm = per_cell.max_runs;
  per_cell.growth = request.growth;
  per_cell.can_rerun_baseline = request.a.left() > 0;

  RunPlan plan;
  for (const CellLook& c : request.cells) {
    if (c.comparison.verdict == analysis::ChangeVerdict::kUndecided) ++plan.undecided;
    analysis::RunRequest more;
    if (!request.confirm) {
      more = analysis::more_runs(c.comparison, per_cell);
      const auto& x = c.comparison;
      if ((x.verdict == analysis::ChangeVerdict::kRegression || x.verdict == analysis::ChangeVerdict::kImprovement) &&
          std::min(x.runs_a, x.runs_b) < request.runs_to_flag) {
        const int target = std::min(per_cell.max_runs, std::max(request.runs_to_flag, std::max(x.runs_a, x.runs_b)));
        more.add_b = std::max(0, target - x.runs_b);
        more.add_a = per_cell.can_rerun_baseline ? std::max(0, target - x.runs_a) : 0;
      }
    } else if (request.confirm_cells.count(c.cell)) {
      more = analysis::confirmation_runs(c.comparison, per_cell);
    }
    if (more.add_a > 0) {
      plan.a.runs = std::max(plan.a.runs, more.add_a);
      plan.a.points.insert(c.cell.point);
    }
    if (more.add_b > 0) {
      plan.b.runs = std::max(plan.b.runs, more.add_b);
      plan.b.points.insert(c.cell.point);
    }
  }
  if (request.every_point) {
    std::set<store::PointId> all;
    for (const CellLook& c : request.cells) all.insert(c.cell.point);
    if (plan.a.runs > 0) plan.a.points = all;
    if (plan.b.runs > 0) plan.b.points = all;
  }
  plan.a.runs = std::min(plan.a.runs, request.a.left());
  plan.b.runs = std::min(plan.b.runs, request.b.left());
  if (plan.a.runs == 0) plan.a.points.clear();
  if (plan.b.runs == 0) plan.b.points.clear();
  return plan;
}

}  // namespace perfwatch::judge
