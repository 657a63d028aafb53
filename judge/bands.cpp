#include "judge/bands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "store/analysis_store.h"

namespace perfwatch::judge {

std::string commit_source(store::CommitId commit) { return "commit:" + std::to_string(commit); }

namespace {

analysis::NoiseEvidence evidence_of(const store::NoiseEvidenceTotals& t) {
  analysis::NoiseEvidence e;
  e.sum_sq_log = t.aa.sum_sq_log + t.history.sum_sq_log;
  e.df = t.aa.df + t.history.df;
  return e;
}

std::string percent(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * rel);
  return buf;
}

}  // namespace

Result<analysis::NoiseBand> Bands::band(store::TestbedId testbed, const std::string& variant, store::PointId point,
                                        bool paired, const std::vector<std::string>& exclude) {
  store::NoiseEvidenceReader reader(db_);
  auto totals = reader.totals(testbed, variant, point, paired);
  if (!totals) return fail(totals.error());
  analysis::NoiseEvidence e = evidence_of(*totals);
  for (const auto& source : exclude) {
    auto part = reader.part(testbed, variant, point, paired, source);
    if (!part) return fail(part.error());
    if (*part) {
      e.sum_sq_log = std::max(0.0, e.sum_sq_log - (*part)->sum_sq_log);
      e.df = std::max(0.0, e.df - (*part)->df);
    }
  }
  return paired ? analysis::paired_noise_band(e, policy_) : analysis::noise_band(e, policy_);
}

Status Bands::add_group(store::TestbedId testbed, const std::string& variant, store::PointId point, bool paired,
                        const std::string& source, store::EvidenceKind kind, const std::vector<double>& values) {
  analysis::NoiseEvidence e;
  e.add_same_build(values);
  store::NoiseEvidencePart part;
  part.testbed_id = testbed;
  part.variant = variant;
  part.point_id = point;
  part.paired = paired;
  part.source = source;
  part.kind = kind;
  part.sum_sq_log = e.sum_sq_log;
  part.df = e.df;
  part.runs = static_cast<std::int64_t>(values.size());
  return store::NoiseEvidenceWriter(db_).put(part);
}

Status Bands::add_unchanged_pair(store::TestbedId testbed, const std::string& variant, store::PointId point,
                                 const std::string& source, const std::vector<double>& a,
                                 const std::vector<double>& b) {
  if (a.empty() || b.empty()) return {};
  analysis::NoiseEvidence e;
  e.add_unchanged_pair(a, b);
  store::NoiseEvidencePart part;
  part.testbed_id = testbed;
  part.variant = variant;
  part.point_id = point;
  part.source = source;
  part.kind = store::EvidenceKind::kHistory;
  part.sum_sq_log = e.sum_sq_log;
  part.df = e.df;
  part.runs = static_cast<std::int64_t>(a.size() + b.size());
  return store::NoiseEvidenceWriter(db_).put(part);
}

std::string Bands::describe(const analysis::NoiseBand& band, const store::NoiseEvidenceTotals& t,
                            const analysis::BandPolicy& policy) {
  const int r = band.reference_runs;
  char buf[512];
  std::string evidence;
  if (t.aa.runs > 0) {
    std::snprintf(buf, sizeof buf, "%lld A/A runs in %lld group(s) (%.0f df)", static_cast<long long>(t.aa.runs),
                  static_cast<long long>(t.aa.parts), t.aa.df);
    evidence = buf;
  }
  if (t.history.parts > 0) {
    std::snprintf(buf, sizeof buf, "%s%lld measured commit(s) or unchanged pair(s) (%.0f df)",
                  evidence.empty() ? "" : " and ", static_cast<long long>(t.history.parts), t.history.df);
    evidence += buf;
  }
  if (evidence.empty()) evidence = "no runs yet";
  if (!band.calibrated) {
    std::snprintf(buf, sizeof buf,
                  "uncalibrated: the manifest's default +-%s (noise.default_band) for two %d-run means, until %.0f df "
                  "of evidence; so far %s",
                  percent(policy.default_rel).c_str(), r, policy.min_df, evidence.c_str());
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "%.0f%% prediction band for the difference of two %d-run means of one build: "
                "t(%.3f, %.0f df) x s x sqrt(2/%d) = +-%s, s = %s run to run (log scale), from %s",
                100 * band.level, r, 0.5 + band.level / 2, band.df, r, percent(band.rel_halfwidth()).c_str(),
                percent(std::expm1(band.sigma_log)).c_str(), evidence.c_str());
  return buf;
}

Result<store::NoiseBandRecord> Bands::publish(store::TestbedId testbed, const std::string& variant,
                                              store::PointId point, const std::string& note) {
  auto totals = store::NoiseEvidenceReader(db_).totals(testbed, variant, point, /*paired=*/false);
  if (!totals) return fail(totals.error());
  analysis::NoiseBand b = analysis::noise_band(evidence_of(*totals), policy_);
  store::NoiseBandRecord rec;
  rec.testbed_id = testbed;
  rec.variant = variant;
  rec.point_id = point;
  rec.band_rel = b.rel_halfwidth();
  rec.method = describe(b, *totals, policy_) + note;
  rec.k_runs = totals->aa.runs;
  rec.calibrated = b.calibrated;
  rec.source = !b.calibrated ? store::NoiseSource::kDefault
               : totals->aa.df > 0 ? store::NoiseSource::kAa
                                   : store::NoiseSource::kHistory;
  if (auto s = store::AnalysisWriter(db_).put_noise_band(rec); !s) return fail(s.error());
  return rec;
}

}  // namespace perfwatch::judge
