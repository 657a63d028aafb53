#include "views/metric_choice.h"

#include "views/lookup.h"

namespace perfwatch::views {

using nlohmann::json;

Result<MetricChoice> choose_metric(const store::ManifestFacts& facts, const std::optional<std::string>& asked) {
  const std::string name = asked && !asked->empty() ? *asked : facts.metric;
  if (name == facts.metric) {
    for (const auto& m : facts.metrics)
      if (m.name == name) return MetricChoice{m.name, m.unit.empty() ? m.name : m.unit, m.lower_is_better, true};
    return MetricChoice{facts.metric, facts.unit(), facts.lower_is_better, true};
  }
  std::string declared;
  for (const auto& m : facts.metrics) {
    if (m.name == name) return MetricChoice{m.name, m.unit.empty() ? m.name : m.unit, m.lower_is_better, false};
    declared += (declared.empty() ? "" : ", ") + m.name;
  }
  if (declared.empty()) declared = facts.metric;
  return fail(invalid_argument("metric", "'" + name + "' is not a metric the bench declared; use one of: " + declared));
}

json declared_metrics_json(const store::ManifestFacts& facts) {
  json out = json::array();
  for (const auto& m : facts.metrics)
    out.push_back({{"name", m.name},
                   {"unit", m.unit.empty() ? m.name : m.unit},
                   {"lower_is_better", m.lower_is_better},
                   {"judged", m.name == facts.metric}});
  if (out.empty())
    out.push_back({{"name", facts.metric}, {"unit", facts.unit()}, {"lower_is_better", facts.lower_is_better},
                   {"judged", true}});
  return out;
}

void put_metric(json& document, const MetricChoice& shown, const store::ManifestFacts& facts) {
  document["metric"] = shown.name;
  document["unit"] = shown.unit;
  document["lower_is_better"] = shown.lower_is_better;
  document["judged_metric"] = facts.metric;
  document["metrics"] = declared_metrics_json(facts);
}

}  // namespace perfwatch::views
