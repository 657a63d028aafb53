// The bench's input: the plan (first line of stdin) and the measure requests
// that follow, parsed and checked against what bench/plan.schema.json and
// bench/measure.schema.json allow. The bench is standalone (no schema
// library), so the rules are repeated here; errors name the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mla/problem.h"
#include "mla/reference.h"

namespace mla::bench {

struct PlanVariant {
  std::string name;
  VariantParams params;  // defaults of VariantParams where the plan is silent
};

struct PlanPoint {
  std::string id;
  Point point;
};

struct Plan {
  std::string backend = "auto";  // "auto", "cpu" or "cuda"
  std::uint64_t seed = 0;        // 0 = choose one from the clock
  std::vector<PlanVariant> variants;
  std::vector<PlanPoint> points;
  Tolerance tolerance;
  double masked_fraction = 0.1;
  double min_trial_ms = 20;
  double warmup_ms = 50;
  int context_rows = 0;
  int input_sets = 0;
  std::optional<double> softmax_scale;
  int threads = 0;

  // Index of the variant / point with that name, or -1.
  int find_variant(const std::string& name) const;
  int find_point(const std::string& id) const;
};

struct MeasureRequest {
  std::string variant;
  std::string point;
  int trials = 1;
};

// What is wrong with an input document: the field as a path
// ("points[2].batch") and a message that names it too.
struct InputError {
  std::string where;
  std::string message;
};

// Fills *plan, or returns the first problem found.
std::optional<InputError> parse_plan(const nlohmann::json& doc, Plan* plan);
std::optional<InputError> parse_measure(const nlohmann::json& doc, MeasureRequest* request);

// ^[A-Za-z0-9_.+-]{1,64}$, the protocol's names and point ids.
bool is_valid_name(const std::string& name);

}  // namespace mla::bench
