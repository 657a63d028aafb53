#include "store/manifest_facts.h"

#include <optional>

namespace perfwatch::store {

using nlohmann::json;

namespace {

// Reads typed fields of one object, naming the field in errors.
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const json* find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string path(const char* key) const { return where_ + key; }

  std::optional<Error> string(const char* key, std::string& out) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) return invalid_argument(path(key), "must be a string");
    out = v->get<std::string>();
    return std::nullopt;
  }
  std::optional<Error> boolean(const char* key, bool& out) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return invalid_argument(path(key), "must be true or false");
    out = v->get<bool>();
    return std::nullopt;
  }
  std::optional<Error> integer(const char* key, int& out, int minimum) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || v->get<std::int64_t>() < minimum || v->get<std::int64_t>() > 1'000'000)
      return invalid_argument(path(key), "must be an integer from " + std::to_string(minimum) + " to 1000000");
    out = v->get<int>();
    return std::nullopt;
  }
  std::optional<Error> fraction(const char* key, double& out) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number() || !(v->get<double>() > 0) || v->get<double>() > 1)
      return invalid_argument(path(key), "must be a number in (0, 1]");
    out = v->get<double>();
    return std::nullopt;
  }
  // A nested object; nullptr when absent, an error when not an object.
  std::optional<Error> object(const char* key, const json*& out) const {
    out = find(key);
    if (out && !out->is_object()) return invalid_argument(path(key), "must be an object");
    return std::nullopt;
  }
  std::optional<Error> array(const char* key, const json*& out) const {
    out = find(key);
    if (out && !out->is_array()) return invalid_argument(path(key), "must be an array");
    return std::nullopt;
  }

 private:
  const json& object_;
  std::string where_;
};

#define FACTS_TRY(expr) \
  if (auto e_ = (expr)) return fail(std::move(*e_))

// Version 1's metrics: the MLA decode step's four, as runner/manifest.cpp
// translates them. "metric": {"name", "direction"} picks the judged one.
Status read_metric_v1(const Fields& top, ManifestFacts& f) {
  f.metrics = {{"time_us", "us", true},
               {"tokens_per_s", "tokens/s", false},
               {"bytes_per_s", "B/s", false},
               {"flops_per_s", "FLOP/s", false}};
  const json* metric = nullptr;
  FACTS_TRY(top.object("metric", metric));
  if (!metric) return {};
  Fields m(*metric, top.path("metric") + ".");
  FACTS_TRY(m.string("name", f.metric));
  f.lower_is_better = f.metric == schemas::kDefaultMetric;  // each of the four has its one direction
  return {};
}

// Version 2: "metrics": [{"name", "unit", "direction"}], "metric": the name
// of the one judged (default: the first declared).
Status read_metric_v2(const Fields& top, ManifestFacts& f) {
  const json* metrics = nullptr;
  FACTS_TRY(top.array("metrics", metrics));
  std::string judged;
  FACTS_TRY(top.string("metric", judged));
  if (!metrics || metrics->empty()) {
    f.metrics = {{std::string(schemas::kDefaultMetric), "us", true}};
  } else {
    for (std::size_t i = 0; i < metrics->size(); ++i) {
      const json& entry = (*metrics)[i];
      const std::string at = top.path("metrics") + "[" + std::to_string(i) + "]";
      if (!entry.is_object()) return fail(invalid_argument(at, "must be an object"));
      Fields m(entry, at + ".");
      ManifestMetricFacts metric;
      std::string direction;
      FACTS_TRY(m.string("name", metric.name));
      FACTS_TRY(m.string("unit", metric.unit));
      FACTS_TRY(m.string("direction", direction));
      if (metric.name.empty()) return fail(invalid_argument(m.path("name"), "must be a non-empty string"));
      if (direction == "lower_is_better" || direction == "higher_is_better") {
        metric.lower_is_better = direction == "lower_is_better";
      } else if (direction.empty()) {
        metric.lower_is_better = metric.name == schemas::kDefaultMetric;
      } else {
        return fail(invalid_argument(m.path("direction"), "must be lower_is_better or higher_is_better"));
      }
      f.metrics.push_back(std::move(metric));
    }
  }
  if (judged.empty()) judged = f.metrics.front().name;
  for (const auto& metric : f.metrics) {
    if (metric.name != judged) continue;
    f.metric = metric.name;
    f.lower_is_better = metric.lower_is_better;
    return {};
  }
  return fail(invalid_argument(top.path("metric"), "'" + judged + "' is not one of the declared metrics"));
}

Status read_variants(const Fields& top, ManifestFacts& f) {
  const json* variants = nullptr;
  FACTS_TRY(top.array("variants", variants));
  if (!variants) return {};
  for (std::size_t i = 0; i < variants->size(); ++i) {
    const json& v = (*variants)[i];
    const std::string at = top.path("variants") + "[" + std::to_string(i) + "]";
    if (!v.is_object()) return fail(invalid_argument(at, "must be an object"));
    Fields fields(v, at + ".");
    ManifestVariantFacts variant;
    FACTS_TRY(fields.string("name", variant.name));
    if (variant.name.empty()) return fail(invalid_argument(fields.path("name"), "must be a non-empty string"));
    const json* params = nullptr;
    FACTS_TRY(fields.object("params", params));
    if (params) variant.params = *params;
    FACTS_TRY(fields.boolean("baseline", variant.is_baseline));
    if (variant.is_baseline) f.baseline = variant.name;
    f.variants.push_back(std::move(variant));
  }
  // As the runner reads it: a lone variant is the baseline without saying so.
  if (f.baseline.empty() && f.variants.size() == 1) {
    f.variants.front().is_baseline = true;
    f.baseline = f.variants.front().name;
  }
  return {};
}

Status read_sweep(const Fields& top, int version, ManifestFacts& f) {
  const json* sweep = nullptr;
  FACTS_TRY(top.object("sweep", sweep));
  if (!sweep) return {};
  Fields s(*sweep, top.path("sweep") + ".");
  if (version >= 2) {
    const json* axes = nullptr;
    FACTS_TRY(s.object("axes", axes));
    if (axes) {
      for (const auto& [name, values] : axes->items()) {
        if (!values.is_array()) return fail(invalid_argument(s.path("axes") + "." + name, "must be an array"));
        f.axes.push_back({name, static_cast<std::int64_t>(values.size())});
      }
    }
  } else {
    // Version 1's four axes; an absent one has its one default value.
    for (const char* name : {"batch", "heads", "topk", "dtype"}) {
      const json* values = nullptr;
      FACTS_TRY(s.array(name, values));
      f.axes.push_back({name, values ? static_cast<std::int64_t>(values->size()) : 1});
    }
  }
  if (!f.axes.empty()) {
    f.points = 1;
    for (const auto& axis : f.axes) f.points *= axis.values;
  }
  return {};
}

Status read_policies(const Fields& top, ManifestFacts& f) {
  const json* noise = nullptr;
  FACTS_TRY(top.object("noise", noise));
  if (noise) FACTS_TRY(Fields(*noise, top.path("noise") + ".").fraction("default_band", f.default_band_rel));
  const json* runs = nullptr;
  FACTS_TRY(top.object("runs", runs));
  if (runs) {
    Fields r(*runs, top.path("runs") + ".");
    FACTS_TRY(r.integer("per_commit", f.runs.per_commit, 1));
    FACTS_TRY(r.integer("max_per_commit", f.runs.max_per_commit, 1));
    FACTS_TRY(r.boolean("interleave_baseline", f.runs.interleave_baseline));
    FACTS_TRY(r.string("pinned_baseline", f.runs.pinned_baseline));
  }
  return {};
}

#undef FACTS_TRY

}  // namespace

Result<ManifestFacts> manifest_facts(const json& manifest, std::string_view where) {
  ManifestFacts f;
  const std::string prefix = where.empty() ? std::string() : std::string(where) + ": ";
  if (manifest.is_null() || (manifest.is_object() && manifest.empty())) return f;
  if (!manifest.is_object()) return fail(invalid_argument(std::string(where), "the stored manifest is not a JSON object"));
  Fields top(manifest, prefix);
  f.manifest_version = 1;
  if (auto v = manifest.find("schema_version"); v != manifest.end()) {
    if (!v->is_number_integer() || v->get<std::int64_t>() < 1 || v->get<std::int64_t>() > 2)
      return fail(invalid_argument(top.path("schema_version"), "must be 1 or 2"));
    f.manifest_version = v->get<int>();
  }
  if (auto s = f.manifest_version >= 2 ? read_metric_v2(top, f) : read_metric_v1(top, f); !s) return fail(s.error());
  if (auto s = read_variants(top, f); !s) return fail(s.error());
  if (auto s = read_sweep(top, f.manifest_version, f); !s) return fail(s.error());
  if (auto s = read_policies(top, f); !s) return fail(s.error());
  return f;
}

json to_json(const ManifestFacts& f) {
  json variants = json::array();
  for (const auto& v : f.variants)
    variants.push_back({{"name", v.name}, {"params", v.params}, {"is_baseline", v.is_baseline}});
  json axes = json::array();
  for (const auto& a : f.axes) axes.push_back({{"name", a.name}, {"values", a.values}});
  json metrics = json::array();
  for (const auto& m : f.metrics)
    metrics.push_back({{"name", m.name}, {"unit", m.unit}, {"lower_is_better", m.lower_is_better}});
  return {{"schema_version", kManifestFactsSchemaVersion},
          {"manifest_version", f.manifest_version},
          {"metric", f.metric},
          {"lower_is_better", f.lower_is_better},
          {"metrics", std::move(metrics)},
          {"variants", std::move(variants)},
          {"baseline", f.baseline},
          {"axes", std::move(axes)},
          {"points", f.points},
          {"cells", f.cells()},
          {"default_band_rel", f.default_band_rel},
          {"runs",
           {{"per_commit", f.runs.per_commit},
            {"max_per_commit", f.runs.max_per_commit},
            {"interleave_baseline", f.runs.interleave_baseline},
            {"pinned_baseline", f.runs.pinned_baseline}}}};
}

}  // namespace perfwatch::store
