// Comparing two commits at one variant x point: the run is the unit of
// evidence. Inputs are the run medians (one per bench process) of commit A
// (the previous benchmarked commit, or a pinned baseline) and commit B.
//
// Ratio: B/A = exp(mean log B - mean log A), the ratio of geometric means of
// run medians. Run-to-run noise is multiplicative (clocks, placement), so on
// the log scale it is additive and near-normal; the mean of logs is then the
// efficient estimator and gives a t interval that is valid at R = 3, where a
// median of 3 run medians would waste a third of the data and have no
// small-sample interval. The trial-level median already removed outlier
// trials inside each run.
//
// Test: when the band is calibrated, a t-test on log run medians whose
// variance pools this comparison's runs with the band's sigma and df
// (significance.h, pooled_t_test): at 3 vs 3 runs it has df = band df + 4
// instead of Welch's ~4, which is the difference between needing |t| > 8.6
// and |t| > 4.2 (10 A/A runs: 13 df) or 3.4 (100 df, as history accrues)
// at alpha = 0.001. Uncalibrated: Welch's t on the log run
// medians (nothing is known about the noise yet). A rank test cannot serve
// here: 3 vs 3 runs can never reach p < 0.05 (significance.h).
//
// Verdict (direction-aware; "up" means B's metric is larger):
//   regression / improvement: p < alpha AND |log ratio| > the band of this
//     comparison (band.log_halfwidth(runs_a, runs_b)): outside the noise
//     band and significant. Which of the two depends on the metric's direction.
//   within_noise: the equivalence_level CI of the log ratio lies inside
//     +-margin, margin = max(margin_fraction * the band of the reference
//     design (R vs R runs, the "+-x%" the dashboard shows), min_effect_rel):
//     the change, if any, is smaller than what noise does between two
//     standard measurements, or too small to be worth more GPU time.
//   undecided: neither; more_runs() says what to measure next.
// within_noise is deliberately a weak claim (a 70% interval by default): it
// means "not worth more runs now". At 3% run noise, 3 runs a side cannot
// tell 0 from 5% (standard error 2.5%), and demanding a 90% interval sends
// almost every commit to 12 runs (3x the GPU time). A step that a
// within_noise verdict misses is caught by change-point detection over the
// history, which re-opens the comparison (follow_up.h); the simulation
// (benchmarks/detection_sim.md) measures the combination.
// The two conditions for a flag guard against different failures: the band
// (long-run sigma) against a comparison whose few runs happen to agree too
// well, the test (which sees this comparison's own spread) against a stale
// or optimistic band.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "analysis/noise_band.h"

namespace perfwatch::analysis {

enum class Direction { kLowerIsBetter, kHigherIsBetter };  // time_us: lower; throughput: higher
const char* to_string(Direction direction);               // "lower_is_better", "higher_is_better"
std::optional<Direction> parse_direction(std::string_view text);  // the manifest's metric.direction

enum class ChangeVerdict { kRegression, kImprovement, kWithinNoise, kUndecided };
const char* to_string(ChangeVerdict verdict);  // "regression", "improvement", "within_noise", "undecided"
std::optional<ChangeVerdict> parse_change_verdict(std::string_view text);

// The test that decided a comparison, as the documents name it (the band
// that judged says which, see the header comment): "pooled_t" -- a t-test
// on log run medians whose variance pools the band's sigma (the band is
// measured); "welch_t" -- Welch's t-test on log run medians (the band is the
// manifest's default: nothing is known of the noise). `paired`: a variant
// A/B inside one commit (experiment.h), "paired_pooled_t" / "paired_t".
const char* test_name(bool band_calibrated, bool paired = false);

struct ComparePolicy {
  double alpha = 0.001;              // significance for a flag (each look; see more_runs)
  double equivalence_level = 0.70;   // CI used for within_noise (two one-sided tests at 15% a side)
  double margin_fraction = 1.0;      // within_noise margin, as a fraction of the reference band
  double min_effect_rel = 0.02;      // ... but never below this: on a quiet point, changes under
                                     // 2% are not worth more runs (they can still be flagged
                                     // when significant and outside the band)
};

struct Comparison {
  int runs_a = 0, runs_b = 0;
  double ratio = 1;                // B / A (geometric means of run medians)
  double ci_low = 1, ci_high = 1;  // 95% CI of the ratio
  double p_value = 1;              // two-sided, of ratio == 1
  double df = 0;                   // of the t statistic
  double band_rel = 0;             // band of this comparison (runs_a vs runs_b), relative half-width
  double margin_rel = 0;           // within_noise margin, relative half-width
  bool band_calibrated = false;
  ChangeVerdict verdict = ChangeVerdict::kUndecided;

  double delta_rel() const { return ratio - 1; }
};

// A commit's value at a point, as histories and change-point detection use
// it: the geometric mean of its run medians (what `ratio` divides).
// REQUIRES: !run_medians.empty(), every value > 0.
double commit_value(std::span<const double> run_medians);

// REQUIRES: !run_medians_a.empty(), !run_medians_b.empty(), every value > 0.
// With fewer than 3 runs in all and an uncalibrated band there is no
// variance estimate: the verdict is undecided with p = 1.
Comparison compare_runs(std::span<const double> run_medians_a,
                        std::span<const double> run_medians_b, const NoiseBand& band,
                        Direction direction, const ComparePolicy& policy = {});

// How many more runs an undecided comparison should get.
struct RunBudget {
  int max_runs = 12;                // runs of one commit at one point, initial ones included
  int max_runs_confirm = 24;        // the same when a change point re-opens the comparison
  double growth = 2.0;              // each look multiplies the runs per side by this
  bool can_rerun_baseline = true;   // A's build is still at hand (A B A B re-runs)
};
struct RunRequest {
  int add_a = 0, add_b = 0;  // both 0: decided, or the budget is spent (undecided stays final)
};
// Undecided: grow both sides to min(max_runs, ceil(growth * max(runs_a,
// runs_b))), keeping them balanced -- for a fixed number of runs a balanced
// comparison has the smallest standard error -- and interleaving A and B
// runs (A B A B) so that slow drift of the machine hits both. Without
// can_rerun_baseline only B grows. Few, geometrically spaced looks keep the
// sequential inflation of alpha small: with 3 -> 6 -> 12 runs there are at
// most 3 looks, so at most 3 * alpha of unchanged comparisons are flagged.
RunRequest more_runs(const Comparison& comparison, const RunBudget& budget = {});

// Runs for re-opening a comparison that a change point points at
// (follow_up.h): grows both sides as more_runs() does, up to
// max_runs_confirm, for every verdict except regression/improvement, since
// the history is new evidence that a within_noise verdict may have been a
// miss. The larger budget puts GPU time where a step is known to be.
RunRequest confirmation_runs(const Comparison& comparison, const RunBudget& budget);

}  // namespace perfwatch::analysis
