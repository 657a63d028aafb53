// Which declared metric a document shows. Every view can show any metric the
// bench declared (the manifest's metrics: name, unit, direction); judging
// used one of them, so comparisons, flags and measured bands exist for that
// one only, and a document says which it is (`judged_metric`).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/manifest_facts.h"

namespace perfwatch::views {

struct MetricChoice {
  std::string name;             // the metric shown
  std::string unit;             // its declared unit; its name when none is declared
  bool lower_is_better = true;  // its declared direction
  bool judged = true;           // it is the metric judging used
};

// `asked` (the request's `metric`), else the judged metric. kInvalidArgument
// "metric" naming the declared metrics when `asked` is not one of them.
Result<MetricChoice> choose_metric(const store::ManifestFacts& facts, const std::optional<std::string>& asked);

// What a document says about its metric: "metric", "unit", "lower_is_better"
// (of the metric shown), "judged_metric", and "metrics", the declared ones
// ([{name, unit, lower_is_better, judged}], manifest order).
void put_metric(nlohmann::json& document, const MetricChoice& shown, const store::ManifestFacts& facts);
nlohmann::json declared_metrics_json(const store::ManifestFacts& facts);

}  // namespace perfwatch::views
