#include "plan.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

namespace mla::bench {
namespace {

using nlohmann::json;

struct Invalid {
  InputError error;
};

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw Invalid{{where, where + ": " + what}}; }

std::string join(const std::string& parent, const std::string& key) { return parent.empty() ? key : parent + "." + key; }

const json& require_object(const json& doc, const std::string& where) {
  if (!doc.is_object()) fail(where.empty() ? "plan" : where, "must be an object");
  return doc;
}

void only_keys(const json& obj, const std::string& where, std::initializer_list<const char*> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* key : allowed) known = known || it.key() == key;
    if (!known) fail(join(where, it.key()), "unknown field");
  }
}

const json* field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& required(const json& obj, const std::string& where, const char* key) {
  const json* value = field(obj, key);
  if (value == nullptr) fail(join(where, key), "is required");
  return *value;
}

long long integer(const json& value, const std::string& where, long long min, long long max) {
  double number = 0;
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<unsigned long long>() > static_cast<unsigned long long>(max))
      fail(where, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    number = static_cast<double>(value.get<long long>());
  } else if (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>()) {
    number = value.get<double>();
  } else {
    fail(where, "must be an integer");
  }
  if (number < static_cast<double>(min) || number > static_cast<double>(max))
    fail(where, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
  return static_cast<long long>(number);
}

double number(const json& value, const std::string& where, double min, bool exclusive_min, double max) {
  if (!value.is_number()) fail(where, "must be a number");
  const double x = value.get<double>();
  const bool too_small = exclusive_min ? !(x > min) : !(x >= min);
  if (too_small || !(x <= max) || !std::isfinite(x)) {
    std::string rule = exclusive_min ? "must be > " : "must be >= ";
    char text[64];
    std::snprintf(text, sizeof text, "%g", min);
    rule += text;
    if (std::isfinite(max)) {
      std::snprintf(text, sizeof text, " and <= %g", max);
      rule += text;
    }
    fail(where, rule);
  }
  return x;
}

std::string name(const json& value, const std::string& where) {
  if (!value.is_string()) fail(where, "must be a string");
  const std::string text = value.get<std::string>();
  if (!is_valid_name(text)) fail(where, "must be 1 to 64 characters of A-Z a-z 0-9 _ . + -");
  return text;
}

void parse_params(const json& doc, const std::string& where, VariantParams* params) {
  require_object(doc, where);
  only_keys(doc, where, {"block_t", "num_warps", "num_stages", "target_ctas"});
  if (const json* v = field(doc, "block_t")) params->block_t = static_cast<int>(integer(*v, join(where, "block_t"), 1, 1024));
  if (const json* v = field(doc, "num_warps")) params->num_warps = static_cast<int>(integer(*v, join(where, "num_warps"), 1, 32));
  if (const json* v = field(doc, "num_stages")) params->num_stages = static_cast<int>(integer(*v, join(where, "num_stages"), 1, 8));
  if (const json* v = field(doc, "target_ctas"))
    params->target_ctas = static_cast<int>(integer(*v, join(where, "target_ctas"), 0, 1048576));
}

// batch, heads, topk and dtype of a point: version 1's fields or version 2's axes.
void parse_shape(const json& doc, const std::string& where, Point* out) {
  out->batch = static_cast<int>(integer(required(doc, where, "batch"), join(where, "batch"), 1, 4096));
  out->heads = static_cast<int>(integer(required(doc, where, "heads"), join(where, "heads"), 1, 1024));
  out->topk = static_cast<int>(integer(required(doc, where, "topk"), join(where, "topk"), 1, 1048576));
  if (const json* v = field(doc, "dtype")) {
    if (!v->is_string() || !parse_kv_dtype(v->get<std::string>(), &out->dtype))
      fail(join(where, "dtype"), "must be \"bf16\" or \"fp8\" (also spelt \"fp8_e4m3\")");
  }
}

void parse_point(const json& doc, const std::string& where, PlanPoint* out) {
  require_object(doc, where);
  only_keys(doc, where, {"id", "batch", "heads", "topk", "dtype"});
  out->id = name(required(doc, where, "id"), join(where, "id"));
  parse_shape(doc, where, &out->point);
}

void parse_point_v2(const json& doc, const std::string& where, PlanPoint* out) {
  require_object(doc, where);
  only_keys(doc, where, {"id", "axes"});
  const json& id = required(doc, where, "id");
  if (!id.is_string() || !is_valid_point_id_v2(id.get<std::string>()))
    fail(join(where, "id"), "must be 1 to 128 characters with no control characters");
  out->id = id.get<std::string>();
  const std::string axes_where = join(where, "axes");
  const json& axes = require_object(required(doc, where, "axes"), axes_where);
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    const std::string& key = it.key();
    if (key != "batch" && key != "heads" && key != "topk" && key != "dtype")
      fail(join(axes_where, key), "unknown axis (mla_bench's axes: batch, heads, topk, dtype)");
  }
  parse_shape(axes, axes_where, &out->point);
}

void parse_variants(const json& doc, Plan* plan) {
  const json& variants = required(doc, "", "variants");
  if (!variants.is_array() || variants.empty()) fail("variants", "must be a non-empty array");
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const std::string where = "variants[" + std::to_string(i) + "]";
    const json& v = require_object(variants[i], where);
    only_keys(v, where, {"name", "params"});
    PlanVariant variant;
    variant.name = name(required(v, where, "name"), join(where, "name"));
    parse_params(required(v, where, "params"), join(where, "params"), &variant.params);
    if (plan->find_variant(variant.name) >= 0)
      fail(join(where, "name"), "\"" + variant.name + "\" names an earlier variant too");
    plan->variants.push_back(std::move(variant));
  }
}

void parse_points(const json& doc, Plan* plan) {
  const json& points = required(doc, "", "points");
  if (!points.is_array() || points.empty()) fail("points", "must be a non-empty array");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string where = "points[" + std::to_string(i) + "]";
    PlanPoint point;
    if (plan->schema_version == 2)
      parse_point_v2(points[i], where, &point);
    else
      parse_point(points[i], where, &point);
    if (plan->find_point(point.id) >= 0) fail(join(where, "id"), "\"" + point.id + "\" names an earlier point too");
    plan->points.push_back(std::move(point));
  }
}

void parse_backend_and_seed(const json& doc, Plan* plan) {
  if (const json* v = field(doc, "backend")) {
    if (!v->is_string() || (*v != "auto" && *v != "cpu" && *v != "cuda"))
      fail("backend", "must be \"auto\", \"cpu\" or \"cuda\"");
    plan->backend = v->get<std::string>();
  }
  if (const json* v = field(doc, "seed")) {
    if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<long long>() < 0))
      fail("seed", "must be an integer >= 0");
    plan->seed = v->get<std::uint64_t>();
  }
}

// A point whose context cannot hold topk distinct rows has no valid inputs.
void check_context_rows(Plan* plan, const char* setting) {
  if (plan->context_rows <= 0) return;
  for (std::size_t i = 0; i < plan->points.size(); ++i)
    if (plan->points[i].point.topk > plan->context_rows)
      fail("points[" + std::to_string(i) + "]" + (plan->schema_version == 2 ? ".axes.topk" : ".topk"),
           std::string("must be <= ") + setting + " (" + std::to_string(plan->context_rows) +
               ") so its indices can be distinct");
}

// The bench's own settings, shared by version 1's "check" and "timing" and
// version 2's "params": each key is read into the plan when present.
void read_setting(const json& obj, const std::string& where, const std::string& key, Plan* plan) {
  const json& v = obj.at(key);
  const std::string at = join(where, key);
  const double inf = INFINITY;
  if (key == "max_rel_l2_o") plan->tolerance.max_rel_l2_o = number(v, at, 0, true, inf);
  else if (key == "max_abs_lse") plan->tolerance.max_abs_lse = number(v, at, 0, true, inf);
  else if (key == "masked_fraction") plan->masked_fraction = number(v, at, 0, false, 0.9);
  else if (key == "min_trial_ms") plan->min_trial_ms = number(v, at, 0, true, inf);
  else if (key == "warmup_ms") plan->warmup_ms = number(v, at, 0, false, inf);
  else if (key == "context_rows") plan->context_rows = static_cast<int>(integer(v, at, 0, 1LL << 30));
  else if (key == "input_sets") plan->input_sets = static_cast<int>(integer(v, at, 0, 1 << 16));
  else if (key == "softmax_scale") plan->softmax_scale = number(v, at, 0, true, inf);
  else if (key == "threads") plan->threads = static_cast<int>(integer(v, at, 0, 4096));
  else fail(at, "unknown field");
}

void read_settings(const json& obj, const std::string& where, std::initializer_list<const char*> allowed, Plan* plan) {
  require_object(obj, where);
  only_keys(obj, where, allowed);
  for (auto it = obj.begin(); it != obj.end(); ++it) read_setting(obj, where, it.key(), plan);
}

void parse_v2(const json& doc, Plan* plan) {
  only_keys(doc, "", {"kind", "schema_version", "backend", "seed", "variants", "points", "metrics", "judged_metric",
                      "params", "timing"});
  parse_backend_and_seed(doc, plan);
  parse_variants(doc, plan);
  parse_points(doc, plan);

  const json& metrics = required(doc, "", "metrics");
  if (!metrics.is_array() || metrics.empty()) fail("metrics", "must be a non-empty array");
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string where = "metrics[" + std::to_string(i) + "]";
    const json& m = require_object(metrics[i], where);
    only_keys(m, where, {"name", "unit", "direction", "description"});
    MetricDecl decl;
    const json& metric_name = required(m, where, "name");
    if (!metric_name.is_string() || metric_name.get<std::string>().empty())
      fail(join(where, "name"), "must be a non-empty string");
    decl.name = metric_name.get<std::string>();
    const json& unit = required(m, where, "unit");
    if (!unit.is_string()) fail(join(where, "unit"), "must be a string");
    decl.unit = unit.get<std::string>();
    const json& direction = required(m, where, "direction");
    if (direction != "lower_is_better" && direction != "higher_is_better")
      fail(join(where, "direction"), "must be \"lower_is_better\" or \"higher_is_better\"");
    decl.lower_is_better = direction == "lower_is_better";
    bool known_lower = false;
    if (is_known_metric(decl.name, &known_lower) && known_lower != decl.lower_is_better)
      fail(join(where, "direction"), decl.name + " is " + (known_lower ? "lower_is_better" : "higher_is_better") +
                                         " (as mla_bench measures it)");
    for (const MetricDecl& earlier : plan->metrics)
      if (earlier.name == decl.name) fail(join(where, "name"), "\"" + decl.name + "\" is declared twice");
    plan->metrics.push_back(std::move(decl));
  }
  const json& judged = required(doc, "", "judged_metric");
  if (!judged.is_string()) fail("judged_metric", "must be a string");
  plan->judged_metric = judged.get<std::string>();
  bool declared = false;
  for (const MetricDecl& m : plan->metrics) declared = declared || m.name == plan->judged_metric;
  if (!declared) fail("judged_metric", "\"" + plan->judged_metric + "\" is not among the declared metrics");
  bool lower = false;
  if (!is_known_metric(plan->judged_metric, &lower))
    fail("judged_metric", "\"" + plan->judged_metric +
                              "\" is not a metric mla_bench measures (time_us, tokens_per_s, bytes_per_s, flops_per_s)");

  if (const json* params = field(doc, "params"))
    read_settings(*params, "params",
                  {"max_rel_l2_o", "max_abs_lse", "masked_fraction", "context_rows", "input_sets", "softmax_scale",
                   "threads"},
                  plan);
  if (const json* timing = field(doc, "timing")) read_settings(*timing, "timing", {"min_trial_ms", "warmup_ms"}, plan);
  check_context_rows(plan, "params.context_rows");
}

void parse_v1(const json& doc, Plan* plan) {
  only_keys(doc, "", {"kind", "schema_version", "backend", "seed", "variants", "points", "check", "timing"});
  parse_backend_and_seed(doc, plan);
  parse_variants(doc, plan);
  parse_points(doc, plan);
  if (const json* check = field(doc, "check"))
    read_settings(*check, "check", {"max_rel_l2_o", "max_abs_lse", "masked_fraction"}, plan);
  if (const json* timing = field(doc, "timing"))
    read_settings(*timing, "timing",
                  {"min_trial_ms", "warmup_ms", "context_rows", "input_sets", "softmax_scale", "threads"}, plan);
  check_context_rows(plan, "timing.context_rows");
}

void parse(const json& doc, Plan* plan) {
  require_object(doc, "");
  const json& kind = required(doc, "", "kind");
  if (kind != "plan") fail("kind", "must be \"plan\" (the first line is the plan)");
  plan->schema_version = static_cast<int>(integer(required(doc, "", "schema_version"), "schema_version", 1, 2));
  if (plan->schema_version == 2)
    parse_v2(doc, plan);
  else
    parse_v1(doc, plan);
}

}  // namespace

bool is_valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '+' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool is_valid_point_id_v2(const std::string& id) {
  std::size_t chars = 0;
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7F) return false;
    chars += (c & 0xC0) != 0x80;  // count UTF-8 code points, not bytes
  }
  return chars >= 1 && chars <= 128;
}

bool is_known_metric(const std::string& name, bool* lower_is_better) {
  if (name == "time_us") {
    *lower_is_better = true;
    return true;
  }
  if (name == "tokens_per_s" || name == "bytes_per_s" || name == "flops_per_s") {
    *lower_is_better = false;
    return true;
  }
  return false;
}

int Plan::find_variant(const std::string& name) const {
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (variants[i].name == name) return static_cast<int>(i);
  return -1;
}

int Plan::find_point(const std::string& id) const {
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].id == id) return static_cast<int>(i);
  return -1;
}

std::optional<InputError> parse_plan(const json& doc, Plan* plan) {
  try {
    Plan parsed;
    parse(doc, &parsed);
    *plan = std::move(parsed);
    return std::nullopt;
  } catch (const Invalid& e) {
    return e.error;
  }
}

std::optional<InputError> parse_measure(const json& doc, MeasureRequest* request, int schema_version) {
  try {
    if (!doc.is_object()) fail("request", "must be an object");
    only_keys(doc, "", {"kind", "variant", "point", "trials"});
    if (required(doc, "", "kind") != "measure") fail("kind", "must be \"measure\"");
    request->variant = name(required(doc, "", "variant"), "variant");
    if (schema_version == 2) {
      const json& point = required(doc, "", "point");
      if (!point.is_string() || !is_valid_point_id_v2(point.get<std::string>()))
        fail("point", "must be 1 to 128 characters with no control characters");
      request->point = point.get<std::string>();
    } else {
      request->point = name(required(doc, "", "point"), "point");
    }
    request->trials = static_cast<int>(integer(required(doc, "", "trials"), "trials", 1, 10000));
    return std::nullopt;
  } catch (const Invalid& e) {
    return e.error;
  }
}

}  // namespace mla::bench
