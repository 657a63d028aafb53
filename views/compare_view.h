// Two commits side by side: every variant x point with each commit's value
// (the geometric mean of its run medians), the change, the band and the
// verdict; the commits between them. One model, one printer: JSON (the API's
// GET /api/v1/compare; schemas/api/compare.schema.json).
//
// The verdict is what perfwatch's judging says, never a statistic of this
// file: where judging stored a comparison of exactly these two commits (b
// measured against a, on the judged metric), that one (source "judged");
// elsewhere analysis::compare_runs over the two commits' run medians with the
// band judging would use (judge::Bands, the two commits' own runs left out of
// its evidence), source "computed". A metric other than the judged one has no
// measured band: the manifest's default, uncalibrated, and it says so.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"
#include "views/metric_choice.h"

namespace perfwatch::views {

struct CompareRequest {
  std::optional<store::RepoId> repo;        // default: the only repo
  std::string a;                            // required: the reference commit (sha or prefix)
  std::string b;                            // required: the commit compared with it
  std::optional<store::TestbedId> testbed;  // default: one both commits ran on (b's newest run's)
  std::optional<std::string> metric;        // default: the judged one
};

// The longest stretch of first-parent history listed between a and b.
inline constexpr int kCompareRangeMax = 1000;

// The model is the document: it is only ever printed as JSON.
// kInvalidArgument "a"/"b" (missing or malformed), "metric" (undeclared);
// kNotFound "a"/"b"/"testbed".
Result<nlohmann::json> compare_document(store::Database& db, const CompareRequest& request);

}  // namespace perfwatch::views
