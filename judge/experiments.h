// Experiments and negative results, as the daemon records them:
//
//   - variant A/B, automatically, for every non-baseline variant of every
//     measured commit: paired over the commit's runs (each run interleaves
//     the variants' trials, so per run the ratio candidate/baseline cancels
//     the run's own drift), judged by analysis/experiment.h;
//   - from commit trailers: "Perf-Hypothesis: <text>" makes an experiment of
//     the commit (candidate) against the previous benchmarked commit
//     (baseline), unpaired, from the commit comparison; "Perf-Experiment:
//     <id>" puts it in that investigation's group;
//   - by hand (`perfwatch experiment add`): commits or variants, evidence
//     from the runs stored so far.
// Each keeps its evidence table (point, baseline, candidate, delta, band, p,
// verdict) and its verdict; the conclusion is left to people.
#pragma once

#include <string>
#include <vector>

#include "analysis/experiment.h"
#include "common/result.h"
#include "judge/bands.h"
#include "judge/comparisons.h"
#include "judge/commit_runs.h"
#include "runner/manifest.h"
#include "store/experiment_store.h"
#include "store/records.h"

namespace perfwatch::judge {

store::ExperimentVerdict to_store(analysis::ExperimentVerdict verdict);
store::ChangeVerdict to_store(analysis::PointVerdict verdict);

// The evidence rows in store form, under the candidate's name.
std::vector<store::EvidenceRecord> evidence_records(const std::string& candidate,
                                                    const std::vector<store::PointId>& points,
                                                    const std::vector<analysis::EvidenceRow>& rows);

// Variant A/B of one commit. Also adds each candidate's per-run ratios to its
// paired noise evidence (after judging, so a commit never judges itself with
// its own runs twice). Returns the experiments' ids.
Result<std::vector<store::ExperimentId>> record_variant_experiments(
    store::Database& db, Bands& bands, const runner::Manifest& manifest, store::RepoId repo,
    const store::CommitRecord& commit, store::TestbedId testbed, const CommitRuns& runs, PointNames& names,
    const analysis::ComparePolicy& policy);

// The experiment of a commit with a Perf-Hypothesis or Perf-Experiment
// trailer against `baseline` (the previous benchmarked commit), from their
// comparison. Returns nullopt when the commit has neither trailer.
Result<std::optional<store::ExperimentId>> record_trailer_experiment(
    store::Database& db, const runner::Manifest& manifest, store::RepoId repo, const store::CommitRecord& commit,
    const store::CommitRecord& baseline, store::TestbedId testbed, const std::vector<CellComparison>& cells,
    PointNames& names);

}  // namespace perfwatch::judge
