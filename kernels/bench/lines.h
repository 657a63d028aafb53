// The bench's output: one JSON object per line on stdout, each kind as
// schemas/bench/<kind>.schema.json (version 1) or schemas/bench/v2/<kind>.
// schema.json (version 2) defines it, in the version the plan spoke. Nothing
// else goes to stdout.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "faults.h"
#include "mla/backend.h"
#include "mla/reference.h"
#include "plan.h"

namespace mla::bench {

using Line = nlohmann::ordered_json;

// Writes lines and flushes each one, so that a reader never loses a line the
// bench wrote before it died. Applies the trial-count faults.
class LineWriter {
 public:
  LineWriter(std::FILE* out, const Faults& faults);
  void write(const Line& line);
  long long trials_written() const { return trials_; }
  // Fires the faults whose count is reached; called after each trial line and
  // once after the variant lines (for N = 0).
  void apply_faults();

 private:
  void raw(const std::string& text);
  std::FILE* out_;
  Faults faults_;
  long long trials_ = 0;
  bool garbage_done_ = false;
};

struct BuildInfo {
  std::string id;
  std::string compiler;
  std::string cuda_compiler;  // empty without CUDA
  std::string cuda_archs;     // "90;120", empty without CUDA
  std::string flags;
  std::string binary_hash;    // "fnv1a64:<hex>", empty when unreadable
};

// Which protocol the lines are written in: the plan's schema_version and,
// for version 2, the metrics a trial carries (the declared ones mla_bench
// computes, in plan order; the judged one among them).
struct Dialect {
  int version = 1;
  std::vector<std::string> trial_metrics;
  static Dialect of(const Plan& plan);
};

Line header_line(const Dialect& dialect, const DeviceInfo& device, const std::string& backend_reason,
                 const BuildInfo& build, std::uint64_t seed);
Line variant_line(const Dialect& dialect, const PlanVariant& variant, const VariantReport& report);
Line params_json(const VariantParams& params);

struct CheckReport {
  std::string status;  // ok, incorrect, infeasible
  std::string reason;
  std::optional<Comparison> comparison;
  std::optional<Tolerance> tolerance;
  std::optional<LaunchReport> launch;
  std::optional<double> working_set_bytes;
  std::optional<int> input_sets;
};
Line check_line(const Dialect& dialect, const std::string& variant, const std::string& point, const CheckReport& report);

Line trial_line(const Dialect& dialect, const std::string& variant, const std::string& point, long long trial,
                const Point& shape, const TrialTiming& timing);
Line skipped_line(const std::string& variant, const std::string& point, const std::string& status,
                  const std::string& reason);
Line footer_line(long long trials, double wall_s);
Line error_line(const std::string& where, const std::string& message);

}  // namespace mla::bench
