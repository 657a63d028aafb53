// What `perfwatch noise` measured: an A/A calibration of one build, per
// variant x point the band it gives. One model, two printers: JSON
// (`perfwatch noise --json`; schemas/cli/noise.schema.json) and text.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/device_offsets.h"
#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::views {

struct NoiseBandEntry {
  store::NoiseBandRecord band;
  store::PointRecord point;
};

struct NoiseView {
  std::string commit;       // the build's commit (full sha)
  int runs = 0;             // K asked for
  int ok_runs = 0;
  std::string failure;      // what stopped it early, if anything
  std::vector<NoiseBandEntry> bands;
  // Runs spread over GPUs: each against the others (analysis/device_offsets.h).
  std::vector<analysis::DeviceOffset> devices;
};

// The model: reads each band's point.
Result<NoiseView> noise_view(store::Database& db, std::string commit, int runs, int ok_runs, std::string failure,
                             const std::vector<store::NoiseBandRecord>& bands,
                             std::vector<analysis::DeviceOffset> devices = {});
nlohmann::json noise_document(const NoiseView& view);
std::string noise_text(const NoiseView& view);

}  // namespace perfwatch::views
