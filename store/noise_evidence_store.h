// The evidence behind noise bands (schemas/sql/003_daemon.sql), kept by the
// daemon and `perfwatch noise`: per testbed x variant x point, contributions
// of pooled squared log deviations with their degrees of freedom, and their
// running sums. analysis/noise_band.h turns a sum into a band.
//
// A contribution is keyed by its source ("commit:12", "aa:340", ...):
// writing it again replaces it, so a commit measured again after more runs,
// or a job redone after a crash, never counts twice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/ids.h"

namespace perfwatch::store {

enum class EvidenceKind { kAa, kHistory };  // "aa", "history"

struct NoiseEvidencePart {
  TestbedId testbed_id = 0;
  std::string variant;
  PointId point_id = 0;
  bool paired = false;  // per-run candidate/baseline ratios (variant A/B), not run values
  std::string source;   // who contributed it; unique per testbed x variant x point x paired
  EvidenceKind kind = EvidenceKind::kHistory;
  double sum_sq_log = 0;
  double df = 0;
  std::int64_t runs = 0;  // runs behind it
};

// The sums over every part of one kind.
struct NoiseEvidenceSum {
  double sum_sq_log = 0;
  double df = 0;
  std::int64_t runs = 0;
  std::int64_t parts = 0;
};

struct NoiseEvidenceTotals {
  NoiseEvidenceSum aa;
  NoiseEvidenceSum history;
};

class NoiseEvidenceWriter {
 public:
  explicit NoiseEvidenceWriter(Database& db) : db_(db) {}

  // Stores the part (replacing the one with the same key) and updates the
  // sums in the same transaction. kInvalidArgument for a negative sum or df,
  // or an empty source.
  Status put(const NoiseEvidencePart& part);

 private:
  Database& db_;
};

class NoiseEvidenceReader {
 public:
  explicit NoiseEvidenceReader(Database& db) : db_(db) {}

  // The sums for one testbed x variant x point (zeros when nothing is stored).
  Result<NoiseEvidenceTotals> totals(TestbedId testbed, const std::string& variant, PointId point, bool paired);

  // The part with this key, if stored.
  Result<std::optional<NoiseEvidencePart>> part(TestbedId testbed, const std::string& variant, PointId point,
                                                bool paired, const std::string& source);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
