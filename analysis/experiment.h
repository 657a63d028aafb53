// Experiments: a candidate (variant, or commit) against a baseline at every
// sweep point, with a verdict and the evidence table behind it.
//
// Variant A/B inside one commit is paired: every run interleaves the
// variants' trials, so per run the ratio candidate median / baseline median
// cancels what that process shares (clocks, placement, thermal state). Across
// runs: the mean of the per-run log ratios, its t interval, and a one-sample
// t-test of "mean log ratio = 0" (pooled with the paired band's sigma when
// that band is calibrated, as compare.h does for commits). The point's
// verdict uses the same rule as a commit comparison:
//   better / worse: p < alpha AND |mean log ratio| > the paired band for this
//     many runs (direction-aware);
//   no_effect: the equivalence_level CI lies inside +-margin (margin_fraction
//     x the paired band of the reference design);
//   undecided: neither.
// Commit experiments (Perf-Hypothesis trailers) are unpaired: build the rows
// from compare_runs() with evidence_row().
//
// The experiment's verdict, exactly as DESIGN.md defines it:
//   accepted  -- better beyond the band at some point, worse at none;
//   rejected  -- worse beyond the band at some point, better at none;
//   mixed     -- both;
//   no_effect -- neither (undecided points count as neither; the counts in
//                ExperimentSummary say how many there were).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "analysis/compare.h"
#include "analysis/noise_band.h"

namespace perfwatch::analysis {

enum class PointVerdict { kBetter, kWorse, kNoEffect, kUndecided };
const char* to_string(PointVerdict verdict);  // "better", "worse", "no_effect", "undecided"
std::optional<PointVerdict> parse_point_verdict(std::string_view text);

enum class ExperimentVerdict { kAccepted, kRejected, kMixed, kNoEffect };
const char* to_string(ExperimentVerdict verdict);  // "accepted", "rejected", "mixed", "no_effect"
std::optional<ExperimentVerdict> parse_experiment_verdict(std::string_view text);

// One row of an experiment's evidence table.
struct EvidenceRow {
  std::string point;       // the sweep point as the store names it, e.g. "batch=64"
  double baseline = 0;     // geometric mean of the baseline's run medians
  double candidate = 0;    // geometric mean of the candidate's run medians
  double delta_rel = 0;    // candidate / baseline - 1 (paired: from the mean per-run log ratio)
  double ci_low_rel = 0, ci_high_rel = 0;  // 95% CI of delta_rel
  double band_rel = 0;     // band used for this row (its design, its run count)
  double p_value = 1;
  int runs = 0;            // paired runs, or the candidate's runs when unpaired
  bool band_calibrated = false;
  PointVerdict verdict = PointVerdict::kUndecided;
};

// Paired comparison at one point: baseline_run_medians[i] and
// candidate_run_medians[i] come from the same run i.
// REQUIRES: equal, non-zero sizes; values > 0. With one run and an
// uncalibrated band there is no variance estimate: undecided, p = 1.
EvidenceRow compare_paired(std::string point, std::span<const double> baseline_run_medians,
                           std::span<const double> candidate_run_medians,
                           const NoiseBand& paired_band, Direction direction,
                           const ComparePolicy& policy = {});

// A row from an unpaired commit comparison (A = baseline, B = candidate).
EvidenceRow evidence_row(std::string point, std::span<const double> baseline_run_medians,
                         std::span<const double> candidate_run_medians,
                         const Comparison& comparison);

struct ExperimentSummary {
  ExperimentVerdict verdict = ExperimentVerdict::kNoEffect;
  int better = 0, worse = 0, no_effect = 0, undecided = 0;  // points
};
ExperimentSummary experiment_verdict(std::span<const EvidenceRow> rows);

}  // namespace perfwatch::analysis
