#include "benchmarks/judging_e2e/scorer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace judging_e2e {

void Score::add(const Score& o) {
  histories += o.histories;
  commits += o.commits;
  failed_watches += o.failed_watches;
  steps += o.steps;
  steps_found += o.steps_found;
  steps_wrong_sign += o.steps_wrong_sign;
  flags_on_found_steps += o.flags_on_found_steps;
  late_step_flags += o.late_step_flags;
  unchanged_comparisons += o.unchanged_comparisons;
  unchanged_comparisons_previous += o.unchanged_comparisons_previous;
  unchanged_comparisons_pinned += o.unchanged_comparisons_pinned;
  false_flags += o.false_flags;
  false_flags_previous += o.false_flags_previous;
  false_flags_pinned += o.false_flags_pinned;
  false_flags_changepoint += o.false_flags_changepoint;
  drift_cells += o.drift_cells;
  drift_cells_flagged += o.drift_cells_flagged;
  drift_flags += o.drift_flags;
  drift_cells_as_drift += o.drift_cells_as_drift;
  late_drift_flags += o.late_drift_flags;
  blip_cells += o.blip_cells;
  blip_cells_flagged += o.blip_cells_flagged;
  blip_flags += o.blip_flags;
  blip_changepoint_flags += o.blip_changepoint_flags;
  flags += o.flags;
  flags_acknowledged += o.flags_acknowledged;
  duplicate_flags += o.duplicate_flags;
  stale_flags += o.stale_flags;
  runs += o.runs;
  runs_max = std::max(runs_max, o.runs_max);
  commits_over_budget += o.commits_over_budget;
  max_per_commit = std::max(max_per_commit, o.max_per_commit);
  wall_s += o.wall_s;
  wall_s_max = std::max(wall_s_max, o.wall_s_max);
}

nlohmann::json Score::to_json() const {
  auto share = [](int a, int b) { return b > 0 ? nlohmann::json(static_cast<double>(a) / b) : nlohmann::json(nullptr); };
  auto per_1000 = [](int a, int b) { return b > 0 ? nlohmann::json(1000.0 * a / b) : nlohmann::json(nullptr); };
  return {
      {"histories", histories},
      {"commits", commits},
      {"failed_watches", failed_watches},
      {"steps", {{"cells", steps}, {"found", steps_found}, {"recall", share(steps_found, steps)},
                 {"wrong_sign", steps_wrong_sign}, {"flags_per_found_step", share(flags_on_found_steps, steps_found)},
                 {"late_flags", late_step_flags}}},
      {"false_flags", {{"flags", false_flags}, {"previous", false_flags_previous}, {"pinned", false_flags_pinned},
                       {"changepoint", false_flags_changepoint},
                       {"unchanged_comparisons", unchanged_comparisons},
                       {"unchanged_comparisons_previous", unchanged_comparisons_previous},
                       {"unchanged_comparisons_pinned", unchanged_comparisons_pinned},
                       {"per_1000", per_1000(false_flags, unchanged_comparisons)}}},
      {"drift", {{"cells", drift_cells}, {"flagged", drift_cells_flagged}, {"share", share(drift_cells_flagged, drift_cells)},
                 {"flags", drift_flags}, {"flags_per_flagged_cell", share(drift_flags, drift_cells_flagged)},
                 {"as_drift", drift_cells_as_drift}, {"as_drift_share", share(drift_cells_as_drift, drift_cells)},
                 {"late_drift_flags", late_drift_flags}}},
      {"blip", {{"cells", blip_cells}, {"flagged", blip_cells_flagged}, {"flags", blip_flags},
                {"changepoint_flags", blip_changepoint_flags}, {"flags_per_cell", share(blip_flags, blip_cells)}}},
      {"flags", {{"open", flags}, {"acknowledged", flags_acknowledged}, {"duplicates", duplicate_flags},
                 {"stale", stale_flags}}},
      {"runs", {{"rows", runs}, {"per_commit_mean", commits > 0 ? nlohmann::json(static_cast<double>(runs) / commits) : nlohmann::json(nullptr)},
                {"per_commit_max", runs_max}, {"max_per_commit", max_per_commit},
                {"commits_over_budget", commits_over_budget}}},
      {"wall_s", {{"total", wall_s}, {"per_history_mean", histories > 0 ? nlohmann::json(wall_s / histories) : nlohmann::json(nullptr)},
                  {"per_history_max", wall_s_max}}}};
}

Score Score::from_json(const nlohmann::json& j) {
  Score s;
  s.histories = j.at("histories");
  s.commits = j.at("commits");
  s.failed_watches = j.at("failed_watches");
  const auto& st = j.at("steps");
  s.steps = st.at("cells");
  s.steps_found = st.at("found");
  s.steps_wrong_sign = st.at("wrong_sign");
  s.late_step_flags = st.at("late_flags");
  // flags_per_found_step is a share of found; the count is its product.
  if (!st.at("flags_per_found_step").is_null())
    s.flags_on_found_steps = static_cast<int>(std::lround(st.at("flags_per_found_step").get<double>() * s.steps_found));
  const auto& ff = j.at("false_flags");
  s.false_flags = ff.at("flags");
  s.false_flags_previous = ff.at("previous");
  s.false_flags_pinned = ff.at("pinned");
  s.false_flags_changepoint = ff.at("changepoint");
  s.unchanged_comparisons = ff.at("unchanged_comparisons");
  s.unchanged_comparisons_previous = ff.at("unchanged_comparisons_previous");
  s.unchanged_comparisons_pinned = ff.at("unchanged_comparisons_pinned");
  const auto& d = j.at("drift");
  s.drift_cells = d.at("cells");
  s.drift_cells_flagged = d.at("flagged");
  s.drift_flags = d.at("flags");
  s.drift_cells_as_drift = d.value("as_drift", 0);  // absent in files of older builds
  s.late_drift_flags = d.value("late_drift_flags", 0);
  const auto& b = j.at("blip");
  s.blip_cells = b.at("cells");
  s.blip_cells_flagged = b.at("flagged");
  s.blip_flags = b.at("flags");
  s.blip_changepoint_flags = b.at("changepoint_flags");
  const auto& f = j.at("flags");
  s.flags = f.at("open");
  s.flags_acknowledged = f.at("acknowledged");
  s.duplicate_flags = f.at("duplicates");
  s.stale_flags = f.at("stale");
  const auto& r = j.at("runs");
  s.runs = r.at("rows");
  s.runs_max = r.at("per_commit_max");
  s.max_per_commit = r.at("max_per_commit");
  s.commits_over_budget = r.at("commits_over_budget");
  const auto& w = j.at("wall_s");
  s.wall_s = w.at("total");
  s.wall_s_max = w.at("per_history_max");
  return s;
}

namespace {

// An open flag at (commit index, cell index).
struct Placed {
  const ObservedFlag* flag;
  int commit, cell;
};

bool slower(const ObservedFlag& f) { return f.magnitude_rel > 0; }

}  // namespace

Score score_history(const History& h, const std::vector<std::string>& shas, const Observed& observed,
                    int max_per_commit) {
  Score s;
  s.histories = 1;
  s.commits = h.commits();
  s.max_per_commit = max_per_commit;

  std::map<std::string, int> index_of;
  for (size_t i = 0; i < shas.size(); ++i) index_of[shas[i]] = static_cast<int>(i);
  auto commit_of = [&](const std::string& sha) {
    auto it = index_of.find(sha);
    if (it != index_of.end()) return it->second;
    // A short sha (a flag's detail may abbreviate it).
    for (const auto& [full, i] : index_of)
      if (!sha.empty() && full.rfind(sha, 0) == 0) return i;
    return -1;
  };
  auto cell_of = [&](const std::string& variant, int batch) {
    for (size_t c = 0; c < h.cells.size(); ++c)
      if (h.cells[c].variant == variant && h.cells[c].batch == batch) return static_cast<int>(c);
    return -1;
  };

  // The drift window of each cell: flags there are the drift's, not false.
  std::vector<std::set<int>> excused(h.cells.size());
  for (const auto& e : h.events)
    if (e.kind == EventKind::kDrift)
      for (int c : e.cells)
        for (int i = e.commit; i < std::min(e.commit + e.length + 2, h.commits()); ++i) excused[c].insert(i);
  auto unchanged = [&](int i, int c) { return !h.changed(i, c) && !excused[c].count(i); };
  // A drift flag is raised where the slide left the band, which at a few
  // percent of noise can be after the slide ended; one within 12 commits of
  // the window that names a start inside the drift is the drift's, late.
  auto late_drift_of = [&](const ObservedFlag& f, int i, int c) -> const Event* {
    if (f.kind != "drift" || f.started_at.empty()) return nullptr;
    for (const auto& e : h.events) {
      if (e.kind != EventKind::kDrift || std::find(e.cells.begin(), e.cells.end(), c) == e.cells.end()) continue;
      const int end = e.commit + e.length + 2, start = commit_of(f.started_at);
      if (i >= end && i < end + 12 && start >= e.commit - 2 && start < e.commit + e.length) return &e;
    }
    return nullptr;
  };

  for (const auto& x : observed.comparisons) {
    const int i = commit_of(x.sha), c = cell_of(x.variant, x.batch);
    if (i < 0 || c < 0 || !unchanged(i, c)) continue;
    if (x.basis == "previous") ++s.unchanged_comparisons_previous;
    else if (x.basis == "pinned") ++s.unchanged_comparisons_pinned;
    else continue;
    ++s.unchanged_comparisons;
  }

  std::vector<Placed> placed;
  std::map<std::pair<int, int>, std::vector<const ObservedFlag*>> at;
  for (const auto& f : observed.flags) {
    if (!f.open) {
      ++s.flags_acknowledged;
      continue;
    }
    const int i = commit_of(f.sha), c = cell_of(f.variant, f.batch);
    if (i < 0 || c < 0) continue;
    ++s.flags;
    placed.push_back({&f, i, c});
    at[{i, c}].push_back(&f);
  }
  for (const auto& [key, list] : at) s.duplicate_flags += static_cast<int>(list.size()) - 1;
  auto flags_at = [&](int i, int c) -> const std::vector<const ObservedFlag*>& {
    static const std::vector<const ObservedFlag*> none;
    auto it = at.find({i, c});
    return it == at.end() ? none : it->second;
  };

  std::map<int, std::vector<const ObservedFlag*>> late_drift;  // cell -> its drift's late flags
  for (const auto& p : placed) {
    if (!unchanged(p.commit, p.cell)) continue;
    if (late_drift_of(*p.flag, p.commit, p.cell)) {
      late_drift[p.cell].push_back(p.flag);
      ++s.late_drift_flags;
      continue;
    }
    ++s.false_flags;
    if (p.flag->kind == "changepoint") ++s.false_flags_changepoint;
    else if (p.flag->basis == "pinned") ++s.false_flags_pinned;
    else ++s.false_flags_previous;
  }

  for (const auto& e : h.events) {
    for (size_t k = 0; k < e.cells.size(); ++k) {
      const int c = e.cells[k];
      switch (e.kind) {
        case EventKind::kStep: {
          ++s.steps;
          const auto& here = flags_at(e.commit, c);
          const bool found = std::any_of(here.begin(), here.end(), [&](auto* f) { return slower(*f) == (e.rel[k] > 0); });
          if (found) {
            ++s.steps_found;
            s.flags_on_found_steps += static_cast<int>(here.size());
          } else if (!here.empty()) {
            ++s.steps_wrong_sign;
          }
          for (int late = e.commit + 1; late <= std::min(e.commit + 2, h.commits() - 1); ++late)
            if (unchanged(late, c)) s.late_step_flags += static_cast<int>(flags_at(late, c).size());
          break;
        }
        case EventKind::kBlip: {
          ++s.blip_cells;
          int n = 0;
          for (int i : {e.commit, e.commit + 1})
            for (auto* f : flags_at(i, c)) {
              ++n;
              if (f->kind == "changepoint") ++s.blip_changepoint_flags;
            }
          s.blip_flags += n;
          if (n > 0) ++s.blip_cells_flagged;
          break;
        }
        case EventKind::kDrift: {
          ++s.drift_cells;
          int n = 0;
          bool as_drift = false;
          for (int i : excused[c])
            for (auto* f : flags_at(i, c)) {
              ++n;
              as_drift = as_drift || f->kind == "drift";
            }
          for (auto* f : late_drift[c]) {
            ++n;
            as_drift = as_drift || f->kind == "drift";
          }
          s.drift_flags += n;
          if (n > 0) ++s.drift_cells_flagged;
          if (as_drift) ++s.drift_cells_as_drift;
          break;
        }
      }
    }
  }

  for (const auto& p : placed) {
    const auto& f = *p.flag;
    if (f.runs < 0) continue;
    auto now = [&](const std::string& sha) {
      const int i = commit_of(sha);
      if (i < 0) return 0;
      auto it = observed.cell_runs.find({shas[i], f.variant, f.batch});
      return it == observed.cell_runs.end() ? 0 : it->second;
    };
    if (f.runs < now(f.sha) || (f.against_runs >= 0 && f.against_runs < now(f.against_sha))) ++s.stale_flags;
  }

  for (const auto& sha : shas) {
    auto it = observed.runs.find(sha);
    const int rows = it == observed.runs.end() ? 0 : it->second.rows;
    s.runs += rows;
    s.runs_max = std::max(s.runs_max, rows);
    if (rows > max_per_commit) ++s.commits_over_budget;
  }
  return s;
}

}  // namespace judging_e2e

namespace judging_e2e {

std::vector<std::string> consistency_problems(const History& h, const std::vector<std::string>& shas,
                                              const Observed& observed) {
  std::vector<std::string> problems;
  // (sha, variant, batch) compared with its predecessor, under either basis:
  // where the predecessor is the pinned baseline, one row serves both.
  std::set<std::tuple<std::string, std::string, int>> compared;
  std::map<std::string, std::string> parent;
  for (size_t i = 1; i < shas.size(); ++i) parent[shas[i]] = shas[i - 1];
  for (const auto& x : observed.comparisons)
    if (parent.count(x.sha) && parent[x.sha] == x.against_sha) compared.insert({x.sha, x.variant, x.batch});
  for (size_t i = 0; i < shas.size(); ++i) {
    auto it = observed.runs.find(shas[i]);
    if (it == observed.runs.end() || it->second.ok == 0) {
      problems.push_back("commit " + std::to_string(i) + " (" + shas[i].substr(0, 10) + "): no run that ended ok");
      continue;
    }
    if (i == 0) continue;
    for (const auto& cell : h.cells)
      if (!compared.count({shas[i], cell.variant, cell.batch}))
        problems.push_back("commit " + std::to_string(i) + " (" + shas[i].substr(0, 10) + "): " + cell.variant + "@b" +
                           std::to_string(cell.batch) + " has no comparison with the previous commit");
  }
  int steps = 0;
  for (const auto& e : h.events)
    if (e.kind == EventKind::kStep) steps += static_cast<int>(e.cells.size());
  if (steps == 0) problems.push_back("the history has no step to find");
  return problems;
}

}  // namespace judging_e2e
