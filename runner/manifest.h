// The manifest: how to build and benchmark a watched repo (perfwatch.json at
// its root, or --manifest FILE). Version 2 (schemas/manifest.v2.schema.json)
// declares named sweep axes and metrics; version 1 (manifest.schema.json, the
// MLA decode step's four axes and metrics) is still read and translated into
// the same model, so nothing above the runner knows which version it was.
// Validated against its schema and then for what a schema cannot say (one
// baseline, unique names, unique point labels, a declared judged metric).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "schemas/manifest_defaults.h"

namespace perfwatch::runner {

struct VariantSpec {
  std::string name;
  nlohmann::json params;    // {"block_t": 32, "num_warps": 4, ...}
  bool baseline = false;
  std::string hypothesis;   // empty when the manifest gives none
};

// One named sweep axis and its values (integers, numbers or strings).
struct AxisSpec {
  std::string name;
  std::vector<nlohmann::json> values;
};

// One sweep point: a value of every axis.
struct PointSpec {
  // What the store keys the point by: point_key(axes), the axes by name in
  // sorted order ("batch=96,dtype=bf16,heads=16"). A label may be
  // renamed; the key of the same coordinates never changes.
  std::string key;
  // What people see: the manifest's sweep.label template ("C{batch}" -> "C96"),
  // else "axis=value,..." over the axes that vary (all of them when none does).
  std::string label;
  nlohmann::ordered_json axes;  // {"batch": 96, "heads": 16, ...} in the manifest's axis order
  // What the bench protocol calls it in the plan, measure requests and lines:
  // the label (version 2), or version 1's "b96_h16_k2048_bf16".
  std::string id;
};

enum class Direction { kLowerIsBetter, kHigherIsBetter };
const char* to_string(Direction direction);  // "lower_is_better", "higher_is_better"

// A declared metric: every trial may carry it; the judged one it must.
struct MetricSpec {
  std::string name;         // "time_us", "tokens_per_s", ...
  std::string unit;         // for people: "us", "tokens/s"
  Direction direction = Direction::kLowerIsBetter;
  std::string description;  // may be empty
};

struct Manifest {
  int schema_version = 2;  // the document's: 1 or 2; the bench protocol spoken is the same version
  std::string name;
  struct Build {
    std::string command;
    std::string workdir = ".";
    double timeout_s = 1800;
  } build;
  std::vector<std::string> paths;
  struct Bench {
    std::string command;
    std::string workdir = ".";
    double timeout_s = 3600;
    double idle_timeout_s = 300;
    std::string backend = "auto";
    std::map<std::string, std::string> env;
    std::vector<std::string> record_env;
    int threads = 0;             // version 1 only (its plan's timing.threads)
    std::string adapter;         // "" (native), "google-benchmark", "command", "nvbench"
    nlohmann::json params = nlohmann::json::object();  // bench.params, opaque; version 1: its check
    nlohmann::json source = nlohmann::json::object();  // the whole bench object (what an adapter reads)
  } bench;
  std::vector<VariantSpec> variants;   // exactly one has baseline = true
  std::vector<AxisSpec> axes;          // manifest order (version 1: its four, manifest.cpp)
  std::string label_template;          // sweep.label; "" = the default label
  std::vector<PointSpec> points;       // the axes' cartesian product, the first axis varying fastest
  struct Trials {
    int min = 5;
    int max = 30;
    double target_rel_ci = 0.01;
    double budget_s = 20;
    double min_trial_ms = 20;
    double warmup_ms = 50;
  } trials;
  std::vector<MetricSpec> metrics;     // declared, manifest order
  struct Metric {                      // the judged one (one of metrics)
    std::string name = std::string(schemas::kDefaultMetric);
    Direction direction = Direction::kLowerIsBetter;
  } metric;
  struct Runs {
    int per_commit = schemas::kDefaultRunsPerCommit;
    int max_per_commit = schemas::kDefaultMaxRunsPerCommit;
    bool interleave_baseline = false;
    std::string pinned_baseline;   // empty = none
  } runs;
  double default_band = schemas::kDefaultBandRel;

  nlohmann::json source;  // the document as read, stored with every run

  const VariantSpec& baseline() const;
  const MetricSpec* find_metric(const std::string& name) const;  // null when not declared
  const PointSpec* find_point_id(const std::string& id) const;    // by the protocol's id
};

// Parses and validates a manifest document. `where` names its origin in
// errors ("perfwatch.json", "--manifest /tmp/m.json"). A parsed nlohmann::json
// object has lost the order of sweep.axes (its keys are sorted), so the points
// go through the axes in name order here; parse_manifest_text keeps the
// document's order, as people wrote it.
Result<Manifest> parse_manifest(const nlohmann::json& document, const std::string& where);

// Parses JSON text and then the manifest, the first axis of sweep.axes as
// written varying fastest. A text that is not JSON is an error naming `where`.
Result<Manifest> parse_manifest_text(std::string_view text, const std::string& where);

// Reads `path` and parses it; the error names the file.
Result<Manifest> load_manifest(const std::filesystem::path& path);

// The folder `workdir` (build.workdir or bench.workdir, named by `field`)
// names inside `checkout`: relative, no `..` that climbs out, no symlink that
// leads out (resolved with weakly_canonical), and an existing directory.
// Errors name the field: "build.workdir: 'x/../../y' leaves the checkout".
// parse_manifest already refuses absolute paths and `..` components.
Result<std::filesystem::path> resolve_workdir(const std::filesystem::path& checkout, const std::string& workdir,
                                              const std::string& field);

// The store's key of a point: "name=value" for every axis, names sorted,
// joined by ","; integers as integers, numbers in their shortest exact form,
// strings as they are ("batch=96,dtype=bf16,heads=16"). Axis values
// cannot hold ',' or '=' (parse_manifest refuses them), so the key is
// unambiguous and can be typed back (`perfwatch query ... --point KEY`).
std::string point_key(const nlohmann::ordered_json& axes);

// A scalar as a key or a label writes it: 48, 0.5, bf16.
std::string axis_value_text(const nlohmann::json& value);

}  // namespace perfwatch::runner
