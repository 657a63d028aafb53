// A commit's runs as the statistics between commits see them: per variant x
// point ("cell"), the medians of its ok runs in run order.
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/compare.h"
#include "common/result.h"
#include "store/analysis_store.h"
#include "store/database.h"

namespace perfwatch::judge {

struct Cell {
  std::string variant;
  store::PointId point = 0;
  friend auto operator<=>(const Cell&, const Cell&) = default;
};

struct CommitRuns {
  std::vector<store::RunMedian> medians;  // as the store returns them

  bool empty() const { return medians.empty(); }
  // Cell -> run medians, in run order.
  std::map<Cell, std::vector<double>> values() const;
  // Run -> cell -> median: what one run measured (for paired variant A/B).
  std::map<store::RunId, std::map<Cell, double>> by_run() const;
  std::set<store::RunId> run_ids() const;
  int runs() const { return static_cast<int>(run_ids().size()); }
};

// What a look over a cell's history needs: whose history, up to which
// commit, on which testbed, how far back, and how changes are judged.
struct HistoryScope {
  store::RepoId repo = 0;
  store::CommitRecord head;  // the commit just judged
  store::TestbedId testbed = 0;
  int window = 100;          // measured commits of history looked at
  analysis::Direction direction = analysis::Direction::kLowerIsBetter;
  analysis::ComparePolicy policy;
};

// The point keys of point ids ("b8_h16_k2048_bf16"), read once each.
class PointNames {
 public:
  explicit PointNames(store::Database& db) : db_(db) {}
  std::string key(store::PointId point);

 private:
  store::Database& db_;
  std::map<store::PointId, std::string> keys_;
};

// The ok runs of `kind` of a commit on a testbed; only those in `only` when given.
Result<CommitRuns> commit_runs(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                               store::RunKind kind = store::RunKind::kBench,
                               const std::optional<std::set<store::RunId>>& only = std::nullopt);

// The bench processes a commit has had: runs of kind bench, whatever their
// status, but `cut_off` -- what runs.max_per_commit caps. A run cut off was
// ended by the daemon's stop or death, not by anything the commit did; were
// it counted, each crash of the daemon would take a run from the commit's
// evidence for good (fault_kill_bench saw a regression left unflagged so).
// Cut-offs stay bounded: a job cut off max_attempts times is given up. Nor
// does `lost` count (the executor lost it: a Slurm job preempted, its node
// failed). The budget is per testbed: the runs on `testbed`, and those that
// never said where they ran (a failed build), which count on every testbed
// so that a commit that cannot build is not retried without end.
Result<int> bench_processes(store::Database& db, store::CommitId commit, std::optional<store::TestbedId> testbed);

}  // namespace perfwatch::judge
