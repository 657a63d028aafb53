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

void parse_point(const json& doc, const std::string& where, PlanPoint* out) {
  require_object(doc, where);
  only_keys(doc, where, {"id", "batch", "heads", "topk", "dtype"});
  out->id = name(required(doc, where, "id"), join(where, "id"));
  out->point.batch = static_cast<int>(integer(required(doc, where, "batch"), join(where, "batch"), 1, 4096));
  out->point.heads = static_cast<int>(integer(required(doc, where, "heads"), join(where, "heads"), 1, 1024));
  out->point.topk = static_cast<int>(integer(required(doc, where, "topk"), join(where, "topk"), 1, 1048576));
  if (const json* v = field(doc, "dtype")) {
    if (!v->is_string() || !parse_kv_dtype(v->get<std::string>(), &out->point.dtype))
      fail(join(where, "dtype"), "must be \"bf16\" or \"fp8_e4m3\"");
  }
}

void parse(const json& doc, Plan* plan) {
  require_object(doc, "");
  only_keys(doc, "", {"kind", "schema_version", "backend", "seed", "variants", "points", "check", "timing"});
  const json& kind = required(doc, "", "kind");
  if (kind != "plan") fail("kind", "must be \"plan\" (the first line is the plan)");
  if (integer(required(doc, "", "schema_version"), "schema_version", 1, 1) != 1) fail("schema_version", "must be 1");
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

  const json& points = required(doc, "", "points");
  if (!points.is_array() || points.empty()) fail("points", "must be a non-empty array");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string where = "points[" + std::to_string(i) + "]";
    PlanPoint point;
    parse_point(points[i], where, &point);
    if (plan->find_point(point.id) >= 0) fail(join(where, "id"), "\"" + point.id + "\" names an earlier point too");
    plan->points.push_back(std::move(point));
  }

  if (const json* check = field(doc, "check")) {
    require_object(*check, "check");
    only_keys(*check, "check", {"max_rel_l2_o", "max_abs_lse", "masked_fraction"});
    const double inf = INFINITY;
    if (const json* v = field(*check, "max_rel_l2_o")) plan->tolerance.max_rel_l2_o = number(*v, "check.max_rel_l2_o", 0, true, inf);
    if (const json* v = field(*check, "max_abs_lse")) plan->tolerance.max_abs_lse = number(*v, "check.max_abs_lse", 0, true, inf);
    if (const json* v = field(*check, "masked_fraction")) plan->masked_fraction = number(*v, "check.masked_fraction", 0, false, 0.9);
  }
  if (const json* timing = field(doc, "timing")) {
    require_object(*timing, "timing");
    only_keys(*timing, "timing", {"min_trial_ms", "warmup_ms", "context_rows", "input_sets", "softmax_scale", "threads"});
    const double inf = INFINITY;
    if (const json* v = field(*timing, "min_trial_ms")) plan->min_trial_ms = number(*v, "timing.min_trial_ms", 0, true, inf);
    if (const json* v = field(*timing, "warmup_ms")) plan->warmup_ms = number(*v, "timing.warmup_ms", 0, false, inf);
    if (const json* v = field(*timing, "context_rows"))
      plan->context_rows = static_cast<int>(integer(*v, "timing.context_rows", 0, 1LL << 30));
    if (const json* v = field(*timing, "input_sets")) plan->input_sets = static_cast<int>(integer(*v, "timing.input_sets", 0, 1 << 16));
    if (const json* v = field(*timing, "softmax_scale")) plan->softmax_scale = number(*v, "timing.softmax_scale", 0, true, inf);
    if (const json* v = field(*timing, "threads")) plan->threads = static_cast<int>(integer(*v, "timing.threads", 0, 4096));
  }
  // A point whose context cannot hold topk distinct rows has no valid inputs.
  if (plan->context_rows > 0) {
    for (std::size_t i = 0; i < plan->points.size(); ++i)
      if (plan->points[i].point.topk > plan->context_rows)
        fail("points[" + std::to_string(i) + "].topk",
             "must be <= timing.context_rows (" + std::to_string(plan->context_rows) + ") so its indices can be distinct");
  }
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

std::optional<InputError> parse_measure(const json& doc, MeasureRequest* request) {
  try {
    if (!doc.is_object()) fail("request", "must be an object");
    only_keys(doc, "", {"kind", "variant", "point", "trials"});
    if (required(doc, "", "kind") != "measure") fail("kind", "must be \"measure\"");
    request->variant = name(required(doc, "", "variant"), "variant");
    request->point = name(required(doc, "", "point"), "point");
    request->trials = static_cast<int>(integer(required(doc, "", "trials"), "trials", 1, 10000));
    return std::nullopt;
  } catch (const Invalid& e) {
    return e.error;
  }
}

}  // namespace mla::bench
