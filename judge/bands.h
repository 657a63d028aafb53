// Noise bands from the evidence in the store (store/noise_evidence_store.h):
// what is added after each measured commit and each A/A calibration, and
// how a comparison gets its band. The statistics are analysis/noise_band.h's;
// this file only decides which evidence goes where.
//
//   - A/A runs of `perfwatch noise` (K runs of one build): one group, K - 1 df.
//   - Every measured commit: its R runs are one group of one build, R - 1 df
//     ("commit:<id>"), refreshed when it gets more runs.
//   - Two commits whose bench binaries are identical (same binary hash):
//     one df from the difference of their means ("pair:<a>-<b>"), which also
//     carries the day-to-day drift that back-to-back runs miss.
//   - Variant A/B: per-run candidate/baseline ratios of each commit, for the
//     paired band of that candidate.
// A comparison of commits A and B leaves A's and B's own groups out of the
// band's evidence: their runs already enter the test's local variance, and
// counting them twice would make the test overconfident.
#pragma once

#include <string>
#include <vector>

#include "analysis/noise_band.h"
#include "common/result.h"
#include "store/database.h"
#include "store/noise_evidence_store.h"
#include "store/records.h"

namespace perfwatch::judge {

// "commit:12"
std::string commit_source(store::CommitId commit);

class Bands {
 public:
  Bands(store::Database& db, analysis::BandPolicy policy) : db_(db), policy_(policy) {}

  const analysis::BandPolicy& policy() const { return policy_; }
  void set_policy(const analysis::BandPolicy& policy) { policy_ = policy; }

  // The band of variant x point, leaving out the evidence of `exclude`
  // (sources). paired: the band of `variant`'s per-run ratio to the baseline.
  Result<analysis::NoiseBand> band(store::TestbedId testbed, const std::string& variant, store::PointId point,
                                   bool paired, const std::vector<std::string>& exclude = {});

  // A group of run values of one build (values > 0; fewer than 2 add nothing
  // but still replace an earlier part of the same source).
  Status add_group(store::TestbedId testbed, const std::string& variant, store::PointId point, bool paired,
                   const std::string& source, store::EvidenceKind kind, const std::vector<double>& values);
  // Two measurements of code that did not change between them.
  Status add_unchanged_pair(store::TestbedId testbed, const std::string& variant, store::PointId point,
                            const std::string& source, const std::vector<double>& a, const std::vector<double>& b);

  // Stores the band of variant x point as the dashboard shows it (all the
  // evidence), with how it was computed (and `note`, appended: what the
  // calibration knows of its runs, such as the GPUs they spread over).
  // Returns the record written.
  Result<store::NoiseBandRecord> publish(store::TestbedId testbed, const std::string& variant, store::PointId point,
                                         const std::string& note = "");

  // "95% band for the difference of two 3-run means: t(0.975, 14 df) x s x sqrt(2/3), s = 1.2% run to run,
  //  from 10 A/A runs (9 df) and 3 commits' runs (5 df)" -- or the default's explanation.
  static std::string describe(const analysis::NoiseBand& band, const store::NoiseEvidenceTotals& totals,
                              const analysis::BandPolicy& policy);

 private:
  store::Database& db_;
  analysis::BandPolicy policy_;
};

}  // namespace perfwatch::judge
