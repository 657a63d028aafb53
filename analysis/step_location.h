// Where one step happened in a stretch of commits, from every run of them.
//
// A 5% step at 3% run-to-run noise is a coin toss for the comparison of its
// commit with the previous one (8 runs a side: standard error 1.5%, so 5% is
// 3.3 of them, against |t| > 3.4 for p < 0.001). The commits around it say
// more: the level before the step is every run since the cell's last flag,
// the level after it every run since. Split the stretch at each commit, test
// the runs before against the runs after (compare_runs: the same band, test
// and verdicts as a commit comparison), and the split with the strongest
// test is where the step most likely is -- the maximum-likelihood location
// of one step, given every run.
//
// Three guards make that a flag worth a person's look:
//   - alpha is divided by the number of splits tried (Bonferroni): the
//     strongest of K tests is not one test;
//   - the location must be clear: the step at `index` must explain the runs
//     better than a step one commit earlier or later by location_margin
//     (a log-likelihood ratio, in units of the band's run-to-run variance);
//     a step whose commit has few runs can be a commit off, and that commit
//     is where more runs help;
//   - a step must explain the runs better than a slide by a margin: a
//     drift of +0.5% a commit also splits into a "before" and an "after"
//     that differ, but it is not one commit's doing. A slide is a level,
//     then a line from some commit to the newest (analysis/drift.h's
//     hinge). (A ramp that has ended, level-line-level, was tried too: at
//     3% run noise a ramp over five commits fits a step about as well as
//     the step does, so it told steps from slides worse.) A step at the newest
//     commit fits exactly as a slide steep there, so it waits for the next
//     commit to tell (the comparison with the previous commit flags it at
//     once when it is strong).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "analysis/compare.h"
#include "analysis/noise_band.h"

namespace perfwatch::analysis {

struct StepLocationPolicy {
  int min_before = 3;  // commits before the step (the level it left)
  int min_after = 1;   // commits from the step on, the step's own included
};

struct StepSplit {
  int index = 0;          // first commit of the new level
  Comparison comparison;  // the runs of commits [0, index) against those of [index, size); verdict at alpha / candidates
  int candidates = 0;     // splits tried
  // Log-likelihood of the step at `index` over one at index - 1 or index + 1,
  // whichever is closer (+inf when neither is a possible split).
  double location_margin = 0;
  // Log-likelihood of the step over the best slide (negative: the slide
  // explains the runs better; 0 when they explain them alike, as for a
  // step at the last commit, which a slide steep there fits as well).
  double slide_margin = 0;
};

// run_medians[k]: the run medians of commit k (oldest first; > 0; a commit
// without runs is skipped as a split and adds nothing). nullopt when fewer
// than min_before + min_after commits have runs.
std::optional<StepSplit> locate_step(std::span<const std::vector<double>> run_medians, const NoiseBand& band,
                                     Direction direction, const ComparePolicy& policy,
                                     const StepLocationPolicy& location = {});

// The comparison of commits [0, index) with [index, size) (a split already
// known: a flag's own, judged again as the runs grow).
// REQUIRES: 0 < index < run_medians.size(), runs on both sides.
Comparison compare_split(std::span<const std::vector<double>> run_medians, int index, const NoiseBand& band,
                         Direction direction, const ComparePolicy& policy);

}  // namespace perfwatch::analysis
