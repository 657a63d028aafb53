#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/distributions.h"
#include "analysis/judge.h"
#include "analysis/significance.h"

namespace perfwatch::analysis {

const char* to_string(Direction direction) {
  return direction == Direction::kLowerIsBetter ? "lower_is_better" : "higher_is_better";
}

const char* test_name(bool band_calibrated, bool paired) {
  if (paired) return band_calibrated ? "paired_pooled_t" : "paired_t";
  return band_calibrated ? "pooled_t" : "welch_t";
}

const char* to_string(ChangeVerdict verdict) {
  switch (verdict) {
    case ChangeVerdict::kRegression: return "regression";
    case ChangeVerdict::kImprovement: return "improvement";
    case ChangeVerdict::kWithinNoise: return "within_noise";
    case ChangeVerdict::kUndecided: return "undecided";
  }
  return "unknown";
}

std::optional<Direction> parse_direction(std::string_view text) {
  for (Direction d : {Direction::kLowerIsBetter, Direction::kHigherIsBetter}) {
    if (text == to_string(d)) return d;
  }
  return std::nullopt;
}

std::optional<ChangeVerdict> parse_change_verdict(std::string_view text) {
  for (ChangeVerdict v : {ChangeVerdict::kRegression, ChangeVerdict::kImprovement,
                          ChangeVerdict::kWithinNoise, ChangeVerdict::kUndecided}) {
    if (text == to_string(v)) return v;
  }
  return std::nullopt;
}

namespace {
std::vector<double> logs(std::span<const double> values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(std::log(v));
  return out;
}
}  // namespace

double commit_value(std::span<const double> run_medians) {
  double sum = 0;
  for (double v : run_medians) sum += std::log(v);
  return std::exp(sum / static_cast<double>(run_medians.size()));
}

Comparison compare_runs(std::span<const double> run_medians_a,
                        std::span<const double> run_medians_b, const NoiseBand& band,
                        Direction direction, const ComparePolicy& policy) {
  const std::vector<double> la = logs(run_medians_a), lb = logs(run_medians_b);
  Comparison c;
  c.runs_a = static_cast<int>(la.size());
  c.runs_b = static_cast<int>(lb.size());
  c.band_calibrated = band.calibrated;
  const double band_log = band.log_halfwidth(c.runs_a, c.runs_b);
  const double margin_log =
      std::max(policy.margin_fraction * band.log_halfwidth(band.reference_runs, band.reference_runs),
               std::log1p(policy.min_effect_rel));
  c.band_rel = std::expm1(band_log);
  c.margin_rel = std::expm1(margin_log);

  TTestResult t;
  if (band.calibrated) {
    t = pooled_t_test(la, lb, band.sigma_log, band.df);
  } else if (la.size() >= 2 && lb.size() >= 2) {
    t = welch_t_test(la, lb);
  } else if (la.size() + lb.size() >= 3) {
    t = pooled_t_test(la, lb);
  } else {
    // One run a side and nothing known about the noise: no evidence.
    double mean_diff = lb[0] - la[0];
    c.ratio = std::exp(mean_diff);
    c.ci_low = 0;
    c.ci_high = INFINITY;
    return c;
  }
  c.ratio = std::exp(t.difference);
  c.p_value = t.p_value;
  c.df = t.df;
  const double half = t.ci_halfwidth(0.95);
  c.ci_low = std::exp(t.difference - half);
  c.ci_high = std::exp(t.difference + half);

  const detail::Judgement j =
      detail::judge({t.difference, t.std_error, t.df, t.p_value}, band_log, margin_log,
                    policy.alpha, policy.equivalence_level);
  const bool up_is_worse = direction == Direction::kLowerIsBetter;
  switch (j) {
    case detail::Judgement::kUp:
      c.verdict = up_is_worse ? ChangeVerdict::kRegression : ChangeVerdict::kImprovement;
      break;
    case detail::Judgement::kDown:
      c.verdict = up_is_worse ? ChangeVerdict::kImprovement : ChangeVerdict::kRegression;
      break;
    case detail::Judgement::kWithin: c.verdict = ChangeVerdict::kWithinNoise; break;
    case detail::Judgement::kUndecided: c.verdict = ChangeVerdict::kUndecided; break;
  }
  return c;
}

namespace {
RunRequest grow(const Comparison& comparison, const RunBudget& budget, int max_runs) {
  const int larger = std::max(comparison.runs_a, comparison.runs_b);
  const int target = std::min(
      max_runs, std::max(larger + 1, static_cast<int>(std::ceil(budget.growth * larger))));
  RunRequest r;
  r.add_b = std::max(0, target - comparison.runs_b);
  if (budget.can_rerun_baseline) r.add_a = std::max(0, target - comparison.runs_a);
  return r;
}
}  // namespace

RunRequest more_runs(const Comparison& comparison, const RunBudget& budget) {
  if (comparison.verdict != ChangeVerdict::kUndecided) return {};
  return grow(comparison, budget, budget.max_runs);
}

RunRequest confirmation_runs(const Comparison& comparison, const RunBudget& budget) {
  if (comparison.verdict == ChangeVerdict::kRegression ||
      comparison.verdict == ChangeVerdict::kImprovement) {
    return {};
  }
  return grow(comparison, budget, budget.max_runs_confirm);
}

}  // namespace perfwatch::analysis
