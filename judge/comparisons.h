// Comparing two commits cell by cell: commit B (the one judged) against commit
// A (the previous benchmarked one on the branch, or the pinned baseline). The
// statistics are analysis/compare.h's; this file feeds them the runs and the
// bands and stores what they say.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "common/result.h"
#include "judge/bands.h"
#include "judge/commit_runs.h"
#include "runner/manifest.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::judge {

analysis::Direction direction_of(const runner::Manifest& manifest);
store::ChangeVerdict to_store(analysis::ChangeVerdict verdict);
bool is_change(analysis::ChangeVerdict verdict);  // regression or improvement

// One cell of a comparison of commit B with commit A.
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
                         store::TestbedId testbed, const std::string& metric, std::span<CellComparison> cells);

// Stores the commit's pooled value of each cell: the geometric mean of its
// run medians, with the 95% t interval of the mean log (no interval from one run).
Status store_commit_summaries(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                              const std::string& metric, const CommitRuns& runs);

}  // namespace perfwatch::judge
