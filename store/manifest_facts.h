// What a run's stored manifest says that readers of results need: the
// declared metrics (name, unit, direction) and the judged one, the variants (params, which is the baseline), the sweep's
// points, the default noise band and the runs policy. A typed record with a
// JSON form (schemas/store/manifest_facts.schema.json), read by one function,
// so that no reader re-parses the manifest document by key.
//
// The manifest itself is kept whole with every run (runs.manifest_json, the
// document as the runner read it, version 1 or 2); facts are derived from it
// on read, so runs stored by any earlier perfwatch have facts too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "schemas/manifest_defaults.h"

namespace perfwatch::store {

struct ManifestVariantFacts {
  std::string name;
  nlohmann::json params = nlohmann::json::object();
  bool is_baseline = false;

  friend bool operator==(const ManifestVariantFacts&, const ManifestVariantFacts&) = default;
};

// One named sweep axis and how many values it has.
struct ManifestAxisFacts {
  std::string name;
  std::int64_t values = 0;

  friend bool operator==(const ManifestAxisFacts&, const ManifestAxisFacts&) = default;
};

// A declared metric: version 2's "metrics", or version 1's four.
struct ManifestMetricFacts {
  std::string name;
  std::string unit;            // for people: "us", "tokens/s"
  bool lower_is_better = true;

  friend bool operator==(const ManifestMetricFacts&, const ManifestMetricFacts&) = default;
};

struct ManifestFacts {
  // The stored manifest's schema_version (1 or 2); 0 when the run was stored
  // without a manifest (every other field is then its default).
  int manifest_version = 0;
  std::string metric = std::string(schemas::kDefaultMetric);  // the metric that is judged
  bool lower_is_better = true;
  // Every declared metric, manifest order (the judged one among them); empty
  // when the run was stored without a manifest.
  std::vector<ManifestMetricFacts> metrics;
  std::vector<ManifestVariantFacts> variants;  // manifest order
  std::string baseline;                        // the baseline variant's name; "" when there are no variants
  std::vector<ManifestAxisFacts> axes;         // the sweep's axes (version 1: its four, runner/manifest.h)
  std::int64_t points = 0;                     // the sweep's points: the product of the axes' sizes
  double default_band_rel = schemas::kDefaultBandRel;  // noise.default_band
  struct Runs {
    int per_commit = schemas::kDefaultRunsPerCommit;
    int max_per_commit = schemas::kDefaultMaxRunsPerCommit;
    bool interleave_baseline = false;
    std::string pinned_baseline;  // "" = none

    friend bool operator==(const Runs&, const Runs&) = default;
  } runs;

  // The judged metric's unit ("us", "tokens/s"); its name when none is declared.
  std::string unit() const {
    for (const auto& m : metrics)
      if (m.name == metric && !m.unit.empty()) return m.unit;
    return metric;
  }

  // variants x points: the cells one full run of this manifest measures.
  std::int64_t cells() const { return static_cast<std::int64_t>(variants.size()) * points; }

  friend bool operator==(const ManifestFacts&, const ManifestFacts&) = default;
};

// The version of the facts' JSON form (schemas/store/manifest_facts.schema.json).
// 2: the declared metrics.
inline constexpr int kManifestFactsSchemaVersion = 2;

// The one reader: the facts of a stored manifest document. An empty object
// (a run stored without a manifest) gives the defaults. A field of the wrong
// type is kInvalidArgument naming it ("<where>: metric.name: must be a
// string"); unknown fields are ignored (the runner validated the document
// when it ran). Never throws.
Result<ManifestFacts> manifest_facts(const nlohmann::json& manifest, std::string_view where);

// The JSON form, with schema_version: what the API's run document carries.
nlohmann::json to_json(const ManifestFacts& facts);

}  // namespace perfwatch::store
