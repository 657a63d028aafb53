#include "analysis/experiment.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

EvidenceRow row(const char* point, PointVerdict verdict) {
  EvidenceRow r;
  r.point = point;
  r.verdict = verdict;
  return r;
}

TEST(ExperimentVerdict, Names) {
  EXPECT_EQ(std::string(to_string(ExperimentVerdict::kAccepted)), "accepted");
  EXPECT_EQ(std::string(to_string(ExperimentVerdict::kRejected)), "rejected");
  EXPECT_EQ(std::string(to_string(ExperimentVerdict::kMixed)), "mixed");
  EXPECT_EQ(std::string(to_string(ExperimentVerdict::kNoEffect)), "no_effect");
  EXPECT_EQ(std::string(to_string(PointVerdict::kBetter)), "better");
  EXPECT_EQ(std::string(to_string(PointVerdict::kNoEffect)), "no_effect");
  EXPECT_EQ(parse_experiment_verdict("rejected"), ExperimentVerdict::kRejected);
  EXPECT_EQ(parse_point_verdict("worse"), PointVerdict::kWorse);
  EXPECT_FALSE(parse_experiment_verdict("no effect").has_value());
}

// Hand-made evidence tables, one per outcome of DESIGN.md's definition.
TEST(ExperimentVerdict, AcceptedWhenBetterSomewhereAndWorseNowhere) {
  const std::vector<EvidenceRow> t = {row("batch=1", PointVerdict::kNoEffect),
                                      row("batch=8", PointVerdict::kBetter),
                                      row("batch=64", PointVerdict::kUndecided)};
  const ExperimentSummary s = experiment_verdict(t);
  EXPECT_EQ(s.verdict, ExperimentVerdict::kAccepted);
  EXPECT_EQ(s.better, 1);
  EXPECT_EQ(s.no_effect, 1);
  EXPECT_EQ(s.undecided, 1);
}

TEST(ExperimentVerdict, RejectedWhenWorseSomewhereAndBetterNowhere) {
  // "num_warps=8 REJECTED: -14..-18% at low C"
  const std::vector<EvidenceRow> t = {row("batch=1", PointVerdict::kWorse),
                                      row("batch=8", PointVerdict::kWorse),
                                      row("batch=96", PointVerdict::kNoEffect)};
  EXPECT_EQ(experiment_verdict(t).verdict, ExperimentVerdict::kRejected);
}

TEST(ExperimentVerdict, MixedWhenBoth) {
  const std::vector<EvidenceRow> t = {row("batch=1", PointVerdict::kBetter),
                                      row("batch=64", PointVerdict::kWorse)};
  const ExperimentSummary s = experiment_verdict(t);
  EXPECT_EQ(s.verdict, ExperimentVerdict::kMixed);
  EXPECT_EQ(s.better, 1);
  EXPECT_EQ(s.worse, 1);
}

TEST(ExperimentVerdict, NoEffectWhenNeither) {
  const std::vector<EvidenceRow> t = {row("batch=1", PointVerdict::kNoEffect),
                                      row("batch=8", PointVerdict::kUndecided)};
  EXPECT_EQ(experiment_verdict(t).verdict, ExperimentVerdict::kNoEffect);
  EXPECT_EQ(experiment_verdict(std::vector<EvidenceRow>{}).verdict, ExperimentVerdict::kNoEffect);
}

// Runs drift by +-5% between processes, the candidate is 3% faster in every
// run. Paired per-run ratios see it; an unpaired comparison of the same run
// medians cannot.
TEST(ComparePaired, PairingCancelsRunToRunDrift) {
  const std::vector<double> base = {100, 105, 95, 102, 98, 104};
  std::vector<double> cand;
  const double wiggle[] = {1.001, 0.999, 1.0, 1.0005, 0.9995, 1.0};
  for (size_t i = 0; i < base.size(); ++i) cand.push_back(base[i] * 0.97 * wiggle[i]);
  NoiseEvidence ratio_noise;  // per-run ratio noise ~0.1%, well measured
  ratio_noise.sum_sq_log = 0.001 * 0.001 * 30;
  ratio_noise.df = 30;
  const EvidenceRow r = compare_paired("batch=64", base, cand, paired_noise_band(ratio_noise),
                                       Direction::kLowerIsBetter);
  EXPECT_EQ(r.point, "batch=64");
  EXPECT_EQ(r.verdict, PointVerdict::kBetter);
  EXPECT_NEAR(r.delta_rel, -0.03, 5e-4);
  EXPECT_LT(r.ci_high_rel, 0);
  EXPECT_LT(r.p_value, 1e-6);
  EXPECT_EQ(r.runs, 6);
  EXPECT_TRUE(r.band_calibrated);
  // Higher is better (throughput): the same numbers are worse.
  EXPECT_EQ(compare_paired("batch=64", base, cand, paired_noise_band(ratio_noise),
                           Direction::kHigherIsBetter)
                .verdict,
            PointVerdict::kWorse);
  // Unpaired, against the run-to-run spread: not a flag.
  NoiseEvidence run_noise;
  run_noise.sum_sq_log = 0.035 * 0.035 * 30;
  run_noise.df = 30;
  const Comparison unpaired =
      compare_runs(base, cand, noise_band(run_noise), Direction::kLowerIsBetter);
  EXPECT_NE(unpaired.verdict, ChangeVerdict::kImprovement);
}

TEST(ComparePaired, UncalibratedUsesTheDefaultBandAndItsOwnSpread) {
  const std::vector<double> base = {100, 104, 98, 102};
  const std::vector<double> cand = {90.1, 93.5, 88.3, 91.7};  // ~10% faster per run
  const EvidenceRow r =
      compare_paired("batch=8", base, cand, paired_noise_band({}), Direction::kLowerIsBetter);
  EXPECT_FALSE(r.band_calibrated);
  EXPECT_NEAR(r.band_rel, std::expm1(std::log(1.05) * std::sqrt(3.0 / 4)), 1e-12);
  EXPECT_EQ(r.verdict, PointVerdict::kBetter);
  // Same code in both variants: no effect.
  const std::vector<double> same = {100.05, 103.98, 98.02, 101.97};
  EXPECT_EQ(compare_paired("batch=8", base, same, paired_noise_band({}),
                           Direction::kLowerIsBetter)
                .verdict,
            PointVerdict::kNoEffect);
}

TEST(EvidenceRow, FromACommitComparison) {
  const std::vector<double> a = {100, 100.5, 99.5}, b = {110, 110.5, 109.5};
  NoiseEvidence e;
  e.sum_sq_log = 0.01 * 0.01 * 100;
  e.df = 100;
  const Comparison c = compare_runs(a, b, noise_band(e), Direction::kLowerIsBetter);
  const EvidenceRow r = evidence_row("batch=1", a, b, c);
  EXPECT_EQ(r.verdict, PointVerdict::kWorse);
  EXPECT_NEAR(r.baseline, 100, 0.01);
  EXPECT_NEAR(r.candidate, 110, 0.01);
  EXPECT_NEAR(r.delta_rel, 0.1, 1e-4);
  EXPECT_EQ(r.band_rel, c.band_rel);
  EXPECT_EQ(r.p_value, c.p_value);
}

}  // namespace
}  // namespace perfwatch::analysis
