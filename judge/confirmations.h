// Change points over each variant x point's recent history (the newest
// WatchOptions::change_point_window measured commits), found with
// analysis/change_points.h (E-Divisive means, permutation test), and turned
// into work: a change point that no flag explains gets a confirm job for the
// commit most likely to hold the step (analysis/follow_up.h), which grows
// that commit's comparison with its predecessor (A B A B runs) until it is
// decided; only a confirmed step is flagged (kind changepoint), naming the
// commit.
//
// A change point is followed up only when it is persistent: found (within
// one commit) both in the history up to this commit and in the history up
// to the one before, so a transient one that comes and goes as commits
// arrive costs no runs; and only when its segments' means differ by at
// least ComparePolicy::min_effect_rel (2%): smaller steps are not worth runs,
// and on a history of equal values E-Divisive (scale-free) splits on rounding.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/change_points.h"
#include "analysis/compare.h"
#include "common/result.h"
#include "judge/bands.h"
#include "judge/comparisons.h"
#include "store/records.h"

namespace perfwatch::judge {

struct ConfirmRequest {
  std::string sha;       // the commit to confirm (compared with its predecessor)
  Cell cell;
  std::string point_key;
  analysis::ChangePoint change_point;
  std::string change_point_sha;  // the commit E-Divisive named

  // How the confirm job's options name it: {"variant", "point", "change_point": {...}}.
  nlohmann::json to_json() const;
};

// The options of the confirm jobs for these requests: one job per commit,
// {"confirm": [cell, ...]}.
std::map<std::string, nlohmann::json> confirm_options(const std::vector<ConfirmRequest>& requests);

struct ChangePointScope : HistoryScope {
  int max_processes = 8;  // runs.max_per_commit: a commit at it can learn nothing more
};

// The confirm jobs to queue after `head` was judged, for these cells.
Result<std::vector<ConfirmRequest>> unexplained_change_points(store::Database& db, Bands& bands,
                                                              const ChangePointScope& scope,
                                                              const std::vector<Cell>& cells, PointNames& names);

}  // namespace perfwatch::judge
