// The noise band of a variant x point on one testbed: how far apart two
// measurements of the same code land, measured rather than assumed.
//
// Model: a run's value (its median; or, for paired variant A/B, its
// candidate/baseline ratio of medians) is lognormal around the code's true
// value, with run-to-run SD sigma on the log scale. sigma is estimated by
// pooling squared deviations of log run values within groups of runs of one
// build (NoiseEvidence): K A/A runs of `perfwatch noise` give K - 1 degrees of
// freedom, every commit measured in R runs adds R - 1 more, and every pair of
// measurements of unchanged code (a commit that touched none of the
// manifest's paths but was measured anyway, or the same build measured on two
// days) adds one more from the difference of their means, which also carries
// the day-to-day drift that back-to-back runs miss.
//
// The band is the 95% prediction interval for the difference of two
// measurements of the same code, on the log scale:
//     unpaired, runs_a vs runs_b runs:  t_{0.975, df} * s * sqrt(1/runs_a + 1/runs_b)
//     paired (mean of n per-run ratios): t_{0.975, df} * s * sqrt(1/n)
// Using t with the df behind s (not 1.96) makes the interval exact for a new
// pair of measurements even though s is estimated (the new difference is
// independent of s, so difference / (s * scale) ~ t_df): with K = 10 A/A runs
// the band is 2.26 s sqrt(2/R), 15% wider than with sigma known. The band
// shrinks as runs are added: it is always the band of *this* comparison.
// rel_halfwidth() is the band for the reference design (R vs R runs, R = 3
// by default; paired: R runs), which is what the dashboard shows as "+-x%".
//
// Calibrated means df >= min_df (default 9: K = 10 A/A runs, or A/A runs plus
// a few measured commits). Until then the band is the manifest's default
// (+-5%) read as a band for the reference design, i.e. the sigma it implies
// with sigma known (1.96 * sigma * sqrt(2/3) = ln 1.05 gives sigma = 3.0%
// unpaired), and it is marked uncalibrated.
#pragma once

#include <span>

#include "schemas/manifest_defaults.h"

namespace perfwatch::analysis {

// Pooled sum of squared log deviations and its degrees of freedom. Two
// numbers, so the store can keep one per testbed x variant x point and add to
// it as commits come in.
struct NoiseEvidence {
  double sum_sq_log = 0;  // sum of squared deviations of log values from their group mean
  double df = 0;

  // A group of run values of one build (A/A runs, or one commit's runs; for a
  // paired band, one commit's per-run candidate/baseline ratios). Adds
  // values.size() - 1 df. Groups of fewer than 2 values add nothing.
  // REQUIRES: every value > 0.
  void add_same_build(std::span<const double> values);

  // Two measurements (runs of each) of code that did not change between them.
  // Adds 1 df: the difference of the two groups' log means, scaled by
  // sqrt(1/n_a + 1/n_b). Their within-group parts are NOT added here: add
  // each group once with add_same_build. REQUIRES: non-empty, values > 0.
  void add_unchanged_pair(std::span<const double> a, std::span<const double> b);

  void merge(const NoiseEvidence& other);

  // sqrt(sum_sq_log / df); 0 when df == 0.
  double sigma_log() const;
};

struct BandPolicy {
  double default_rel = schemas::kDefaultBandRel;  // the manifest's default band, for reference_runs vs reference_runs
  int reference_runs = 3;     // R: runs per commit in the standard measurement
  double min_df = 9;          // evidence needed to call the band calibrated
  double level = 0.95;        // prediction level of the band
};

struct NoiseBand {
  bool calibrated = false;
  bool paired = false;    // band of a mean per-run ratio (variant A/B) rather than of a difference of two means
  double sigma_log = 0;   // run-to-run SD on the log scale (measured, or implied by the default)
  double df = 0;          // behind sigma_log; 0 for the default (sigma taken as known)
  int reference_runs = 3;
  double level = 0.95;

  // Quantile used: t_{(1+level)/2, df}, or the normal one for the default.
  double quantile() const;
  // Half-width on the log scale for an unpaired comparison of runs_a vs runs_b runs.
  double log_halfwidth(int runs_a, int runs_b) const;
  // Half-width on the log scale for a paired comparison over n runs.
  double log_halfwidth_paired(int runs) const;
  // The band of the reference design as a relative half-width: exp(h) - 1.
  double rel_halfwidth() const;
};

// The run-to-run band of one variant x point (for commit comparisons).
NoiseBand noise_band(const NoiseEvidence& evidence, const BandPolicy& policy = {});
// The band of a variant pair's per-run ratio (for variant A/B experiments).
NoiseBand paired_noise_band(const NoiseEvidence& ratio_evidence, const BandPolicy& policy = {});

}  // namespace perfwatch::analysis
