// Reads the web dashboard needs that the other store headers do not offer:
// what can be charted in a repo. Added by the web part (web/); read-only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/analysis_store.h"
#include "store/records.h"

namespace perfwatch::store {

// A variant name as the repo's runs used it.
struct VariantSeen {
  std::string name;
  nlohmann::json params = nlohmann::json::object();  // as its newest run had them
  bool is_baseline = false;                          // in its newest run
  std::int64_t runs = 0;                             // runs that had it
};

// A testbed with how much of a repo it measured.
struct TestbedSeen {
  TestbedRecord testbed;
  std::int64_t runs = 0;     // the repo's runs on it, any kind and status
  std::int64_t commits = 0;  // the repo's commits with an ok run on it
  std::optional<UnixSeconds> last_run_at;  // the newest run's start
};

// A run median of one metric, with the testbed that measured it.
struct MetricRunMedian {
  RunMedian median;
  TestbedId testbed_id = 0;
};

// A cell's newest value, for /metrics: its value at the newest commit (by
// commit time) of the repo that has pooled values on the testbed, with the
// cell's noise band.
struct LatestPointValue {
  std::string repo, testbed, variant, point_key, point_label, metric, sha;
  double value = 0;  // the geometric mean of the commit's run medians
  std::int64_t runs = 0;
  UnixSeconds committed_at = 0;
  std::optional<double> band_rel;  // none stored: the manifest's default applies
  bool band_calibrated = false;
};

class WebReader {
 public:
  explicit WebReader(Database& db) : db_(db) {}

  // Every variant name in the runs of the repo's commits, baseline first,
  // then by name. One pass over run_variants (a row per run x variant: small
  // next to trials).
  Result<std::vector<VariantSeen>> variants_of_repo(RepoId repo);

  // The points that have a summary in the repo's runs, in the order they were
  // first stored (a run stores them in its sweep's order).
  Result<std::vector<PointRecord>> points_of_repo(RepoId repo);

  // Every testbed that ran any of the repo's commits, by id; a testbed no run
  // of the repo used is left out.
  Result<std::vector<TestbedSeen>> testbeds_of_repo(RepoId repo);

  // The medians of `metric` (any declared one, judged or not) of the ok bench
  // and baseline-rerun runs of `commit`, on `testbed` when given, per
  // variant x point, ordered by variant, point, run. A metric no run
  // summarised gives an empty list.
  Result<std::vector<MetricRunMedian>> metric_run_medians(CommitId commit, std::optional<TestbedId> testbed,
                                                          std::string_view metric);

  // The cells of the newest measured commit of every repo x testbed (by
  // name), at most `limit` of them, by variant and point key. A cell that
  // commit did not measure (a variant since dropped) is not among them.
  Result<std::vector<LatestPointValue>> latest_point_values(int limit);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
