// One run's table -- variant x point: the median of the trials of the judged
// metric, its 95% CI, trials, the median of every other declared metric, the
// correctness check, and the change against the run's baseline variant -- as
// one model with two printers: JSON (the API's
// GET /api/v1/runs/{id}, `perfwatch query runs --run|--latest --json`,
// `perfwatch bench --json`; schemas/api/run.schema.json) and text for people.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/manifest_facts.h"
#include "store/records.h"
#include "store/run_store.h"

namespace perfwatch::views {

// What a cell adds to the store's: the figures derived from its summary.
struct RunCellFigures {
  // median / the baseline variant's median at the same point of the same run
  // - 1 (analysis::delta_rel); nullopt for the baseline itself or when either
  // has no median.
  std::optional<double> delta_vs_baseline;
  // The same for every summarised metric, by name (the judged one too), so
  // that a reader can switch metrics without computing a change itself.
  std::map<std::string, std::optional<double>> deltas_vs_baseline;
};

struct RunView {
  store::RunTable table;
  store::CommitRecord commit;
  std::optional<store::TestbedRecord> testbed;
  store::ManifestFacts facts;         // of the run's stored manifest
  std::vector<RunCellFigures> figures;  // one per table.cells, same order

  const store::VariantRecord* baseline() const;  // the run's baseline variant, if any
};

// The model of run `run`. kNotFound "run" for an unknown run.
Result<RunView> run_view(store::Database& db, store::RunId run);

// The JSON printer (schemas/api/run.schema.json).
nlohmann::json run_document(const RunView& view);

// The text printer: one line per variant x point, grouped by point.
std::string run_text(const RunView& view);

}  // namespace perfwatch::views
