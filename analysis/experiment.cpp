#include "analysis/experiment.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "analysis/judge.h"
#include "analysis/significance.h"

namespace perfwatch::analysis {

const char* to_string(PointVerdict verdict) {
  switch (verdict) {
    case PointVerdict::kBetter: return "better";
    case PointVerdict::kWorse: return "worse";
    case PointVerdict::kNoEffect: return "no_effect";
    case PointVerdict::kUndecided: return "undecided";
  }
  return "unknown";
}

const char* to_string(ExperimentVerdict verdict) {
  switch (verdict) {
    case ExperimentVerdict::kAccepted: return "accepted";
    case ExperimentVerdict::kRejected: return "rejected";
    case ExperimentVerdict::kMixed: return "mixed";
    case ExperimentVerdict::kNoEffect: return "no_effect";
  }
  return "unknown";
}

std::optional<PointVerdict> parse_point_verdict(std::string_view text) {
  for (PointVerdict v : {PointVerdict::kBetter, PointVerdict::kWorse, PointVerdict::kNoEffect,
                         PointVerdict::kUndecided}) {
    if (text == to_string(v)) return v;
  }
  return std::nullopt;
}

std::optional<ExperimentVerdict> parse_experiment_verdict(std::string_view text) {
  for (ExperimentVerdict v : {ExperimentVerdict::kAccepted, ExperimentVerdict::kRejected,
                              ExperimentVerdict::kMixed, ExperimentVerdict::kNoEffect}) {
    if (text == to_string(v)) return v;
  }
  return std::nullopt;
}

namespace {
double log_mean(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return s / static_cast<double>(v.size());
}
}  // namespace

EvidenceRow compare_paired(std::string point, std::span<const double> baseline_run_medians,
                           std::span<const double> candidate_run_medians,
                           const NoiseBand& paired_band, Direction direction,
                           const ComparePolicy& policy) {
  EvidenceRow row;
  row.point = std::move(point);
  const int n = static_cast<int>(baseline_run_medians.size());
  row.runs = n;
  row.band_calibrated = paired_band.calibrated;
  row.baseline = std::exp(log_mean(baseline_run_medians));
  row.candidate = std::exp(log_mean(candidate_run_medians));
  std::vector<double> log_ratios(n);
  for (int i = 0; i < n; ++i) {
    log_ratios[i] = std::log(candidate_run_medians[i] / baseline_run_medians[i]);
  }
  const double band_log = paired_band.log_halfwidth_paired(n);
  const double margin_log =
      std::max(policy.margin_fraction * paired_band.log_halfwidth_paired(paired_band.reference_runs),
               std::log1p(policy.min_effect_rel));
  row.band_rel = std::expm1(band_log);

  if (!paired_band.calibrated && n < 2) {
    row.delta_rel = std::expm1(log_ratios[0]);
    row.ci_low_rel = -1;
    row.ci_high_rel = INFINITY;
    return row;
  }
  const TTestResult t = paired_band.calibrated
                            ? one_sample_t_test(log_ratios, 0, paired_band.sigma_log, paired_band.df)
                            : one_sample_t_test(log_ratios);
  row.delta_rel = std::expm1(t.difference);
  const double half = t.ci_halfwidth(0.95);
  row.ci_low_rel = std::expm1(t.difference - half);
  row.ci_high_rel = std::expm1(t.difference + half);
  row.p_value = t.p_value;
  const detail::Judgement j =
      detail::judge({t.difference, t.std_error, t.df, t.p_value}, band_log, margin_log,
                    policy.alpha, policy.equivalence_level);
  const bool up_is_better = direction == Direction::kHigherIsBetter;
  switch (j) {
    case detail::Judgement::kUp:
      row.verdict = up_is_better ? PointVerdict::kBetter : PointVerdict::kWorse;
      break;
    case detail::Judgement::kDown:
      row.verdict = up_is_better ? PointVerdict::kWorse : PointVerdict::kBetter;
      break;
    case detail::Judgement::kWithin: row.verdict = PointVerdict::kNoEffect; break;
    case detail::Judgement::kUndecided: row.verdict = PointVerdict::kUndecided; break;
  }
  return row;
}

EvidenceRow evidence_row(std::string point, std::span<const double> baseline_run_medians,
                         std::span<const double> candidate_run_medians,
                         const Comparison& comparison) {
  EvidenceRow row;
  row.point = std::move(point);
  row.baseline = std::exp(log_mean(baseline_run_medians));
  row.candidate = std::exp(log_mean(candidate_run_medians));
  row.delta_rel = comparison.delta_rel();
  row.ci_low_rel = comparison.ci_low - 1;
  row.ci_high_rel = comparison.ci_high - 1;
  row.band_rel = comparison.band_rel;
  row.p_value = comparison.p_value;
  row.runs = comparison.runs_b;
  row.band_calibrated = comparison.band_calibrated;
  switch (comparison.verdict) {
    case ChangeVerdict::kImprovement: row.verdict = PointVerdict::kBetter; break;
    case ChangeVerdict::kRegression: row.verdict = PointVerdict::kWorse; break;
    case ChangeVerdict::kWithinNoise: row.verdict = PointVerdict::kNoEffect; break;
    case ChangeVerdict::kUndecided: row.verdict = PointVerdict::kUndecided; break;
  }
  return row;
}

ExperimentSummary experiment_verdict(std::span<const EvidenceRow> rows) {
  ExperimentSummary s;
  for (const EvidenceRow& r : rows) {
    switch (r.verdict) {
      case PointVerdict::kBetter: ++s.better; break;
      case PointVerdict::kWorse: ++s.worse; break;
      case PointVerdict::kNoEffect: ++s.no_effect; break;
      case PointVerdict::kUndecided: ++s.undecided; break;
    }
  }
  if (s.better > 0 && s.worse > 0) s.verdict = ExperimentVerdict::kMixed;
  else if (s.better > 0) s.verdict = ExperimentVerdict::kAccepted;
  else if (s.worse > 0) s.verdict = ExperimentVerdict::kRejected;
  else s.verdict = ExperimentVerdict::kNoEffect;
  return s;
}

}  // namespace perfwatch::analysis
