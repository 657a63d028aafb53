// The manifest: how to build and benchmark a watched repo (perfwatch.json at
// its root, or --manifest FILE). Validated against schemas/manifest.schema.json
// and then for what a schema cannot say (one baseline, unique names).
#pragma once

#include <filesystem>
#include <map>
#include <string>
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

// One sweep point: the shape of one decode step.
struct PointSpec {
  std::string id;           // "b96_h16_k2048_bf16"
  int batch = 1;
  int heads = 16;
  int topk = 2048;
  std::string dtype = "bf16";
};

enum class Direction { kLowerIsBetter, kHigherIsBetter };

struct Manifest {
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
    int threads = 0;
  } bench;
  std::vector<VariantSpec> variants;   // exactly one has baseline = true
  std::vector<PointSpec> points;       // the sweep's cartesian product, batch varying fastest
  struct Trials {
    int min = 5;
    int max = 30;
    double target_rel_ci = 0.01;
    double budget_s = 20;
    double min_trial_ms = 20;
    double warmup_ms = 50;
  } trials;
  struct Check {
    double max_rel_l2_o = 0.01;
    double max_abs_lse = 0.001;
    double masked_fraction = 0.1;
  } check;
  struct Metric {
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
};

// Parses and validates a manifest document. `where` names its origin in
// errors ("perfwatch.json", "--manifest /tmp/m.json").
Result<Manifest> parse_manifest(const nlohmann::json& document, const std::string& where);

// Reads `path` and parses it; the error names the file.
Result<Manifest> load_manifest(const std::filesystem::path& path);

// The folder `workdir` (build.workdir or bench.workdir, named by `field`)
// names inside `checkout`: relative, no `..` that climbs out, no symlink that
// leads out (resolved with weakly_canonical), and an existing directory.
// Errors name the field: "build.workdir: 'x/../../y' leaves the checkout".
// parse_manifest already refuses absolute paths and `..` components.
Result<std::filesystem::path> resolve_workdir(const std::filesystem::path& checkout, const std::string& workdir,
                                              const std::string& field);

// "b96_h16_k2048_bf16"
std::string point_id(int batch, int heads, int topk, const std::string& dtype);

}  // namespace perfwatch::runner
