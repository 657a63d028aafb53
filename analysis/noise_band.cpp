#include "analysis/noise_band.h"

#include <cmath>

#include "analysis/distributions.h"

namespace perfwatch::analysis {
namespace {

double log_mean(std::span<const double> values) {
  double s = 0;
  for (double v : values) s += std::log(v);
  return s / static_cast<double>(values.size());
}

NoiseBand make_band(const NoiseEvidence& evidence, const BandPolicy& policy, bool paired) {
  NoiseBand band;
  band.paired = paired;
  band.reference_runs = policy.reference_runs;
  band.level = policy.level;
  if (evidence.df >= policy.min_df) {
    band.calibrated = true;
    band.sigma_log = evidence.sigma_log();
    band.df = evidence.df;
    return band;
  }
  // Default: the manifest's +-x% read as the band of the reference design
  // with sigma known; recover the sigma that gives exactly that band.
  const double r = policy.reference_runs;
  const double scale = paired ? std::sqrt(1 / r) : std::sqrt(2 / r);
  band.sigma_log = std::log1p(policy.default_rel) / (band.quantile() * scale);
  return band;
}

}  // namespace

void NoiseEvidence::add_same_build(std::span<const double> values) {
  if (values.size() < 2) return;
  const double m = log_mean(values);
  for (double v : values) {
    const double d = std::log(v) - m;
    sum_sq_log += d * d;
  }
  df += static_cast<double>(values.size()) - 1;
}

void NoiseEvidence::add_unchanged_pair(std::span<const double> a, std::span<const double> b) {
  const double d = log_mean(b) - log_mean(a);
  const double scale2 = 1.0 / a.size() + 1.0 / b.size();
  sum_sq_log += d * d / scale2;  // d ~ N(0, sigma^2 * scale2): one df of sigma^2
  df += 1;
}

void NoiseEvidence::merge(const NoiseEvidence& other) {
  sum_sq_log += other.sum_sq_log;
  df += other.df;
}

double NoiseEvidence::sigma_log() const { return df > 0 ? std::sqrt(sum_sq_log / df) : 0; }

double NoiseBand::quantile() const {
  const double p = 0.5 + level / 2;
  return df > 0 ? student_t_quantile(p, df) : normal_quantile(p);
}

double NoiseBand::log_halfwidth(int runs_a, int runs_b) const {
  return quantile() * sigma_log * std::sqrt(1.0 / runs_a + 1.0 / runs_b);
}

double NoiseBand::log_halfwidth_paired(int runs) const {
  return quantile() * sigma_log * std::sqrt(1.0 / runs);
}

double NoiseBand::rel_halfwidth() const {
  const double h = paired ? log_halfwidth_paired(reference_runs)
                          : log_halfwidth(reference_runs, reference_runs);
  return std::expm1(h);
}

NoiseBand noise_band(const NoiseEvidence& evidence, const BandPolicy& policy) {
  return make_band(evidence, policy, /*paired=*/false);
}

NoiseBand paired_noise_band(const NoiseEvidence& ratio_evidence, const BandPolicy& policy) {
  return make_band(ratio_evidence, policy, /*paired=*/true);
}

}  // namespace perfwatch::analysis
