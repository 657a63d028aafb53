// The bench's input: the plan (first line of stdin) and the measure requests
// that follow, parsed and checked against what the protocol's schemas allow:
// version 1 (schemas/bench/plan.schema.json: points with batch, heads, topk,
// dtype fields; check tolerances and timing settings in "check" and
// "timing") or version 2 (schemas/bench/v2/: points as named axes, declared
// metrics and the judged one, the bench's own settings in "params"). Both
// fill the same Plan. The bench is standalone (no schema library), so the
// rules are repeated here; errors name the field.
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

// The metrics a trial can carry, and which way is better.
struct MetricDecl {
  std::string name;  // time_us, tokens_per_s, bytes_per_s or flops_per_s
  std::string unit;
  bool lower_is_better = false;
};

// The names mla_bench computes for every trial: time_us (lower is better),
// tokens_per_s, bytes_per_s, flops_per_s (higher is better).
bool is_known_metric(const std::string& name, bool* lower_is_better);

struct Plan {
  int schema_version = 1;        // the protocol the runner speaks; lines are written in it
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
  // Version 2: the metrics declared (in plan order) and the judged one. Each
  // trial carries the declared metrics mla_bench computes, the judged one
  // always; version 1 trials carry all four as fields.
  std::vector<MetricDecl> metrics;
  std::string judged_metric;

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

// Fills *plan, or returns the first problem found. schema_version picks the
// dialect (1 or 2; anything else is an error naming schema_version).
std::optional<InputError> parse_plan(const nlohmann::json& doc, Plan* plan);
// A request of a plan of `schema_version` (2 allows the wider point ids).
std::optional<InputError> parse_measure(const nlohmann::json& doc, MeasureRequest* request, int schema_version = 1);

// ^[A-Za-z0-9_.+-]{1,64}$, the protocol's names (and version 1's point ids).
bool is_valid_name(const std::string& name);
// Version 2's point ids: 1 to 128 characters, no control characters.
bool is_valid_point_id_v2(const std::string& id);

}  // namespace mla::bench
