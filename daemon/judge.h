// Judging a commit: its pooled value per variant x point, its comparison with
// another commit (the previous benchmarked one on the branch, or the pinned
// baseline), and the flags those comparisons raise. The statistics are
// analysis/'s (compare.h); this file feeds them the runs and the bands and
// keeps what they say.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "common/result.h"
#include "daemon/bands.h"
#include "daemon/run_values.h"
#include "runner/manifest.h"
#include "store/analysis_store.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::daemon {

analysis::Direction direction_of(const runner::Manifest& manifest);
store::ChangeVerdict to_store(analysis::ChangeVerdict verdict);

// The point keys of point ids, read once each.
class PointNames {
 public:
  explicit PointNames(store::Database& db) : db_(db) {}
  std::string key(store::PointId point);

 private:
  store::Database& db_;
  std::map<store::PointId, std::string> keys_;
};

// Stores the commit's pooled value of each cell: the geometric mean of its
// run medians, with the 95% t interval of the mean log (no interval from one run).
Status store_commit_summaries(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                              const std::string& metric, const CommitRuns& runs);

// One cell of a comparison of commit B (the one judged) with commit A.
struct CellComparison {
  Cell cell;
  std::vector<double> a, b;  // run medians
  analysis::Comparison comparison;
  store::ComparisonId id = 0;  // once stored
};

// Compares every cell both commits have. Each cell's band leaves out A's and
// B's own evidence (bands.h).
Result<std::vector<CellComparison>> compare_commits(Bands& bands, store::TestbedId testbed, store::CommitId a,
                                                    const CommitRuns& a_runs, store::CommitId b,
                                                    const CommitRuns& b_runs, analysis::Direction direction,
                                                    const analysis::ComparePolicy& policy);

// Stores the comparisons (updating those of an earlier look) and fills their ids.
Status store_comparisons(store::Database& db, store::CommitId b, store::CommitId a, store::ComparisonBasis basis,
                         store::TestbedId testbed, const std::string& metric, std::vector<CellComparison>& cells);

struct RaisedFlagInfo {
  store::FlagRecord flag;
  bool created = false;  // new: worth a webhook
  const CellComparison* comparison = nullptr;
};

// Raises a flag for each cell judged regression or improvement: of that kind,
// or of kind changepoint for the cells a change point's confirmation was
// about (`change_points`: cell -> what E-Divisive said, kept in the detail).
// `basis` says what the commit was compared with; it goes into the detail.
Result<std::vector<RaisedFlagInfo>> raise_flags(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                                                const std::string& against_sha,
                                                const std::vector<CellComparison>& cells,
                                                const std::map<Cell, nlohmann::json>& change_points,
                                                store::ComparisonBasis basis = store::ComparisonBasis::kPrevious);

// The cells of a comparison with the pinned baseline that are news: judged
// regression or improvement where the comparison with the previous commit did
// not already say so (`previous`), and where the previous commit's own
// comparison with the pinned baseline did not say the same (`previous_pinned`).
// That is drift: small steps, each within noise, that together left the band.
// Without the second rule every commit after the drift would be flagged again.
std::vector<CellComparison> pinned_drift(const std::vector<CellComparison>& pinned,
                                         const std::vector<CellComparison>& previous,
                                         const std::vector<store::ComparisonRecord>& previous_pinned);

}  // namespace perfwatch::daemon
