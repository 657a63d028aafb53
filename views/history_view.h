// One variant x point along a branch, oldest first: per commit its value --
// the geometric mean of its runs' medians, the statistic commits are
// compared by -- with its 95% CI, the run medians behind it and the flag;
// with the point's noise band. One model, two printers: JSON (the API's
// GET /api/v1/history and `perfwatch query history --json`;
// schemas/api/history.schema.json) and text.
//
// A series never mixes statistics: a commit the analysis has pooled shows
// the stored value (analysis::commit_value over its runs, with its CI); a
// commit not pooled yet (its job is still running, or `perfwatch bench`
// measured it) shows the same statistic computed here from the runs listed,
// without a CI, and says so (pooled: false).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/history_store.h"
#include "store/manifest_facts.h"
#include "views/metric_choice.h"

namespace perfwatch::views {

struct HistoryRequest {
  std::optional<store::RepoId> repo;     // default: the only repo
  std::optional<std::string> branch;     // default: views::resolve_branch's rule
  std::string variant;                   // required
  std::string point;                     // required: a label (C48), a key, or axes (batch=48,heads=16)
  std::optional<store::TestbedId> testbed;  // default: that of the newest ok run there
  int limit = 200;                       // commits from the head, 1..kHistoryLimitMax
  // Any declared metric (views/metric_choice.h); default: the judged one.
  // Another metric's series has no pooled CI and no measured band (judging
  // measured neither for it): its band is the manifest's default.
  std::optional<std::string> metric;
};
inline constexpr int kHistoryLimitMax = 5000;

// A commit's value in the series.
struct HistoryValue {
  std::optional<double> geomean_of_run_medians;  // nullopt: no run with a positive median
  std::optional<double> ci_low, ci_high;         // of the geomean; only when pooled
  bool pooled = false;                           // true: the analysis' stored value
  std::int64_t runs = 0;                         // runs behind the value
};

struct HistoryView {
  store::RepoId repo_id = 0;
  std::string branch;
  int limit = 0;
  store::PointHistory history;         // entries oldest first, measured commits only
  std::vector<HistoryValue> values;    // one per history.entries
  // value / the previous entry's value - 1 (analysis::delta_rel): what the
  // chart's hover says; nullopt for the first or when either has no value.
  std::vector<std::optional<double>> deltas;
  store::ManifestFacts facts;          // of the newest measured commit's manifest
  MetricChoice metric;                 // the metric shown
};

// The model. kInvalidArgument "variant" / "point" / "limit" / "metric" for a missing
// or bad field, kNotFound "point" for an unknown point, "branch" / "repo" as
// views::resolve_* say.
Result<HistoryView> history_view(store::Database& db, const HistoryRequest& request);

// The JSON printer, written straight to text (a tree of a thousand entries
// would cost more than the query: benchmarks/web_history_bench.md).
std::string history_document(const HistoryView& view);

// The text printer: one line per commit.
std::string history_text(const HistoryView& view);

}  // namespace perfwatch::views
