#include "views/noise_view.h"

#include <cstdio>

#include "store/run_store.h"
#include "views/fragments.h"
#include "views/text_format.h"

namespace perfwatch::views {

using nlohmann::json;

Result<NoiseView> noise_view(store::Database& db, std::string commit, int runs, int ok_runs, std::string failure,
                             const std::vector<store::NoiseBandRecord>& bands,
                             std::vector<analysis::DeviceOffset> devices) {
  NoiseView view{std::move(commit), runs, ok_runs, std::move(failure), {}, std::move(devices)};
  store::RunReader reader(db);
  for (const auto& b : bands) {
    auto p = reader.point(b.point_id);
    if (!p) return fail(p.error());
    view.bands.push_back({b, std::move(*p)});
  }
  return view;
}

json noise_document(const NoiseView& v) {
  json bands = json::array();
  for (const auto& e : v.bands) {
    json j = band_json(e.band);
    j["variant"] = e.band.variant;
    j["point"] = point_json(e.point);
    bands.push_back(std::move(j));
  }
  json doc = {{"schema_version", kSchemaVersion}, {"commit", v.commit}, {"runs", v.runs},
              {"ok_runs", v.ok_runs},          {"failure", v.failure}, {"bands", std::move(bands)}};
  if (!v.devices.empty()) {
    json devices = json::array();
    for (const auto& d : v.devices) {
      devices.push_back({{"device", d.device}, {"runs", d.runs}, {"offset_rel", d.offset_rel},
                         {"p_value", d.p_value}, {"off", d.off}});
    }
    doc["devices"] = std::move(devices);
  }
  return doc;
}

std::string noise_text(const NoiseView& v) {
  std::string out = "\nA/A noise calibration of " + v.commit.substr(0, 10) + ": " + std::to_string(v.ok_runs) + " of " +
                    std::to_string(v.runs) + " runs ok" + (v.failure.empty() ? "" : " (stopped: " + v.failure + ")") +
                    "\n";
  out +=
      "Band = the 95% prediction interval for the difference of two R-run means of one build (R = runs.per_commit):\n"
      "t(0.975, df) x s x sqrt(2/R), s = the run-to-run SD of log run medians pooled over these K runs (K - 1 df)\n"
      "and every measured commit's own runs; calibrated from 9 df on, until then the manifest's default band.\n\n";
  char line[1024];
  std::snprintf(line, sizeof line, "%-28s %-16s %10s  %-12s %s\n", "point", "variant", "band", "state", "how");
  out += line;
  for (const auto& e : v.bands) {
    std::snprintf(line, sizeof line, "%-28s %-16s %10s  %-12s %s\n", e.point.key.c_str(), e.band.variant.c_str(),
                  text::band(e.band.band_rel).c_str(), e.band.calibrated ? "calibrated" : "uncalibrated",
                  e.band.method.c_str());
    out += line;
  }
  if (!v.devices.empty()) {
    out += "\nGPUs (runs spread over them; a GPU that is off is left out of the bands):\n";
    for (const auto& d : v.devices) {
      std::snprintf(line, sizeof line, "  %-44s %3d runs  %+7.2f%% against the others  p = %-8.2g %s\n",
                    d.device.c_str(), d.runs, 100 * d.offset_rel, d.p_value, d.off ? "OFF: left out" : "ok");
      out += line;
    }
  }
  return out;
}

}  // namespace perfwatch::views
