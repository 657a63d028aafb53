// Judging a measured commit: the one entry point between the job loop and
// the statistics. Given the commit, what it is compared with and which other
// commits got runs while it was measured, it
//
//   1. stores the commit's pooled values (and those of the commits that grew);
//   2. compares it with the previous benchmarked commit, stores the
//      comparison and judges its flags (flags.h: one step, one flag; a
//      confirmation refreshes the flag that stands);
//   3. judges again every stored comparison whose evidence grew -- the
//      previous commit's with its own predecessor, and those of the commits
//      that use a grown commit as their reference -- withdrawing the flags
//      that no longer hold;
//   4. compares it with the pinned baseline, or with the cell's level, and
//      flags drift (drift.h);
//   5. adds its runs to the noise evidence and republishes the bands;
//   6. records the experiments (variant A/B; a Perf-Hypothesis trailer);
//   7. looks for change points no flag explains, and says which commits to
//      confirm;
//   8. closes the open alert groups that a commit with new or refreshed
//      flags undoes (recoveries.h: "recovered at <commit>").
//
// It stores what it judged and returns what happened; it announces nothing
// and queues nothing: that is the job loop's (daemon/notify.h).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/compare.h"
#include "common/result.h"
#include "judge/bands.h"
#include "judge/comparisons.h"
#include "judge/confirmations.h"
#include "judge/flags.h"
#include "judge/recoveries.h"
#include "runner/manifest.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::judge {

struct JudgeRequest {
  const runner::Manifest* manifest = nullptr;  // REQUIRES: set
  store::RepoId repo = 0;
  store::CommitRecord commit;
  store::TestbedId testbed = 0;
  std::optional<store::CommitRecord> previous;  // the previous benchmarked commit, if any
  std::optional<store::CommitRecord> pinned;    // runs.pinned_baseline, if any
  // The pinned baseline's re-runs beside this commit (runs.interleave_baseline);
  // empty: its own runs.
  std::set<store::RunId> pinned_reruns;
  std::set<store::CommitId> grown;  // other commits that got runs while this one was measured
  // A confirmation job: the cells a change point asked about (cell -> what it said).
  std::map<Cell, nlohmann::json> confirm;
  analysis::ComparePolicy policy;
  int change_point_window = 100;
};

// What one comparison said, counted by verdict (for the log).
struct ComparisonTally {
  std::string commit_sha, against_sha;
  std::string basis;  // previous, pinned, level, rejudged
  std::map<std::string, int> verdicts;
};

struct ExperimentNote {
  store::ExperimentId id = 0;
  std::string source;     // auto, trailer
  std::string candidate;
  std::string verdict;
};

struct JudgeResult {
  std::vector<ComparisonTally> comparisons;
  std::vector<FlagEvent> flags;          // raised, refreshed, withdrawn, reinstated
  std::vector<ExperimentNote> experiments;
  std::vector<ConfirmRequest> confirms;  // change points to confirm (not queued)
  std::vector<Recovery> recoveries;      // alert groups closed as recovered
  std::optional<std::string> unchanged_pair;  // the previous commit's sha, when their bench binaries are identical
  std::string binary_hash;
};

Result<JudgeResult> judge_commit(store::Database& db, const JudgeRequest& request);

// The comparison of `commit` with `against` as the runs stand now, for
// planning more runs (run_plan.h); stores nothing.
Result<std::vector<CellComparison>> look(store::Database& db, const runner::Manifest& manifest,
                                         store::TestbedId testbed, store::CommitId against, store::CommitId commit,
                                         const analysis::ComparePolicy& policy);

}  // namespace perfwatch::judge
