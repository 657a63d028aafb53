#include "benchmarks/judging_e2e/report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace judging_e2e {

namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pct(int a, int b) { return b > 0 ? fmt("%.1f%%", 100.0 * a / b) : "-"; }
std::string ratio(int a, int b, const char* format = "%.2f") { return b > 0 ? fmt(format, static_cast<double>(a) / b) : "-"; }

const std::vector<std::string>& header() {
  static const std::vector<std::string> h = {
      "scenario", "hist", "steps", "recall", "false/1k", "false/1k prev", "false flags (prev/pin/cp) / comparisons",
      "flags/step", "drift flagged", "as drift", "flags/drift", "late drift", "blip flags/cell", "dup", "stale", "runs/commit", "max (budget)",
      "over budget", "wall s/hist"};
  return h;
}

std::vector<std::string> row(const ScenarioResult& r) {
  const Score& s = r.total;
  return {r.scenario.name,
          std::to_string(s.histories),
          std::to_string(s.steps),
          pct(s.steps_found, s.steps),
          s.unchanged_comparisons > 0 ? fmt("%.1f", 1000.0 * s.false_flags / s.unchanged_comparisons) : "-",
          s.unchanged_comparisons_previous > 0
              ? fmt("%.1f", 1000.0 * s.false_flags / s.unchanged_comparisons_previous)
              : "-",
          std::to_string(s.false_flags) + " (" + std::to_string(s.false_flags_previous) + "/" +
              std::to_string(s.false_flags_pinned) + "/" + std::to_string(s.false_flags_changepoint) + ") / " +
              std::to_string(s.unchanged_comparisons),
          ratio(s.flags_on_found_steps, s.steps_found),
          std::to_string(s.drift_cells_flagged) + "/" + std::to_string(s.drift_cells) + " " +
              pct(s.drift_cells_flagged, s.drift_cells),
          std::to_string(s.drift_cells_as_drift) + "/" + std::to_string(s.drift_cells) + " " +
              pct(s.drift_cells_as_drift, s.drift_cells),
          ratio(s.drift_flags, s.drift_cells_flagged),
          std::to_string(s.late_drift_flags),
          ratio(s.blip_flags, s.blip_cells),
          std::to_string(s.duplicate_flags),
          std::to_string(s.stale_flags) + "/" + std::to_string(s.flags),
          ratio(s.runs, s.commits),
          std::to_string(s.runs_max) + " (" + std::to_string(s.max_per_commit) + ")",
          std::to_string(s.commits_over_budget),
          s.histories > 0 ? fmt("%.1f", s.wall_s / s.histories) : "-"};
}

}  // namespace

std::string text_table(const std::vector<ScenarioResult>& results) {
  std::vector<std::vector<std::string>> rows = {header()};
  for (const auto& r : results) rows.push_back(row(r));
  std::vector<size_t> width(header().size(), 0);
  for (const auto& cells : rows)
    for (size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  std::ostringstream out;
  for (const auto& cells : rows) {
    for (size_t i = 0; i < cells.size(); ++i) {
      out << cells[i] << std::string(width[i] - cells[i].size(), ' ');
      if (i + 1 < cells.size()) out << "  ";
    }
    out << '\n';
  }
  return out.str();
}

std::string markdown(const std::vector<ScenarioResult>& results, const RunInfo& info) {
  std::ostringstream md;
  md << "# judging_e2e: how well `perfwatch watch` judges, end to end\n\n";
  if (!info.label.empty()) md << "**" << info.label << "**\n\n";
  md << "```\n" << info.command << "\n```\n\n";
  md << "- date: " << info.date << "\n"
     << "- machine: " << info.machine << " (shared with other builds; wall times are that machine's)\n"
     << "- perfwatch measured: `" << info.perfwatch << "` (`" << info.perfwatch_version << "`)\n"
     << "- " << info.histories << " histories per scenario of " << info.commits << " commits, seed " << info.seed
     << ", --jobs " << info.jobs << ", " << fmt("%.0f", info.wall_s) << " s in all\n\n";
  md << "| " ;
  for (const auto& h : header()) md << h << " | ";
  md << "\n|";
  for (size_t i = 0; i < header().size(); ++i) md << "---|";
  md << "\n";
  for (const auto& r : results) {
    md << "| ";
    for (const auto& c : row(r)) md << c << " | ";
    md << "\n";
  }
  md << R"(
## What is measured

Each history is a git repository of commits that each change `truth.json`, a
file the manifest watches; it holds the true time of one step of every cell
(2 variants x 3 batch sizes). The synthetic bench (`judging_e2e_bench`, bench
protocol version 1) reports trials of true time x run factor x trial factor:
the run factor is drawn once per bench process and cell, lognormal with the
scenario's sigma (`noise0.5` = 0.5% ... `noise6` = 6%: the process-to-process
noise perfwatch's bands measure); the trial factor has sigma 0.3%. Each history
has 5% steps at random commits (each on a random part of the cells, slower or
faster at random), one blip (+5% on some cells for one commit, then back),
one drift (+0.5% a commit for 12 commits on every cell, +6.2% in all), and
unchanged stretches of at least 4 commits between them; nothing happens in the
first 8 commits. `+pin`: the manifest's `runs.pinned_baseline` names the first
commit. The manifest asks for `runs.per_commit` 3 and `runs.max_per_commit` 8
(the defaults; `--max-per-commit` sets another budget: the table's max (budget)
column says which), trials 3..6. `perfwatch --db <fresh db> watch --repo <repo>
--once --since <first commit>` judges the whole history; the figures are read
from its database afterwards (tables commits, runs, summaries, comparisons,
flags). A flag counts when it is open (not acknowledged).

| column | meaning |
|---|---|
| hist | histories in the scenario |
| steps | step cells: one per cell a step moves (a step of 3 cells counts 3) |
| recall | share of step cells with a flag (any kind) at the step's own commit whose sign is the step's |
| false/1k | false flags per 1,000 unchanged comparisons |
| false/1k prev | the same per 1,000 unchanged comparisons with the previous commit only (with a pin every commit is also compared with the pin, which doubles the comparisons but, since the pin raises no flag, not the chances of a false flag) |
| false flags (prev/pin/cp) / comparisons | false flags: open flags on a cell at a commit where that cell's truth did not change (late flags of a step included), outside the drift window (the drift's 12 commits and the 2 after) and not a late drift flag; split by origin: against the previous commit / against the pinned baseline (detail basis `pinned`) / `changepoint`. Unchanged comparisons: rows of `comparisons` (basis `previous` and `pinned` both) of a cell at a commit where its truth did not change, outside the drift window (at the commit after the pinned baseline one row serves both bases, as perfwatch stores it) |
| flags/step | flags on the cell at the step's commit, per found step cell (1 is the aim: one step, one flag) |
| drift flagged | drift cells with at least one flag of the drift's (inside the drift window, or a late drift flag), of all drift cells |
| as drift | drift cells with a flag of kind `drift` among the drift's flags, of all drift cells |
| flags/drift | the drift's flags per flagged drift cell (1 is the aim: once, where it leaves the band) |
| late drift | drift flags within 12 commits after the drift window that name a start (`started_at`) inside the drift: raised where the slide left the band, after it ended; the drift's, not false |
| blip flags/cell | flags per blip cell at the blip's commit and the one after (where it goes back) |
| dup | flags beyond the first on one cell of one commit (e.g. a `changepoint` flag where a regression flag stands) |
| stale | open flags whose recorded evidence (detail `runs`, `against_runs`) is fewer runs than the database now holds for that cell at its commit or at the commit it was compared with, of all open flags |
| runs/commit | rows of `runs` (every kind and status: bench processes) per commit, mean |
| max (budget) | most rows of `runs` of one commit, against the manifest's `runs.max_per_commit` |
| over budget | commits with more runs than `runs.max_per_commit` |
| wall s/hist | wall time of `perfwatch watch` per history, mean |

The JSON output (`--json FILE`) has every count behind these columns, per scenario.
)";
  return md.str();
}

nlohmann::json to_json(const std::vector<ScenarioResult>& results, const RunInfo& info) {
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& r : results) {
    auto j = r.total.to_json();
    j["scenario"] = r.scenario.name;
    j["run_noise"] = r.scenario.run_noise;
    j["pinned"] = r.scenario.pinned;
    scenarios.push_back(j);
  }
  return {{"schema", "judging_e2e 1"},
          {"command", info.command},
          {"label", info.label},
          {"date", info.date},
          {"machine", info.machine},
          {"perfwatch", info.perfwatch},
          {"perfwatch_version", info.perfwatch_version},
          {"commits", info.commits},
          {"histories", info.histories},
          {"jobs", info.jobs},
          {"seed", info.seed},
          {"wall_s", info.wall_s},
          {"scenarios", scenarios}};
}

}  // namespace judging_e2e
