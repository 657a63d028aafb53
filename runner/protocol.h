// The bench protocol, both versions: schemas/bench/ (version 1, the MLA
// decode step's fields) and schemas/bench/v2/ (named axes, declared metrics).
// The runner writes the plan and measure requests of the manifest's version
// and reads the lines back, each validated against its schema, then
// normalised into the types below, so that nothing above the runner knows
// which version a bench spoke.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "runner/manifest.h"
#include "schemas/schema.h"

namespace perfwatch::runner {

enum class LineKind { kHeader, kVariant, kCheck, kTrial, kSkipped, kFooter, kError };
const char* to_string(LineKind kind);

// One validated stdout line as the bench wrote it.
struct BenchLine {
  LineKind kind;
  nlohmann::json doc;
};

// A variant's output at a point against the bench's reference.
struct CheckLine {
  std::string variant;
  std::string point;   // the point's key (PointSpec::key)
  std::string status;  // "ok", "incorrect", "infeasible"
  std::string reason;  // empty for ok
  nlohmann::json errors = nlohmann::json::object();     // measured error by name; null when not a number
  nlohmann::json tolerance = nlohmann::json::object();  // the bound of each, by the same names
  nlohmann::json detail = nlohmann::json::object();     // for people: launch shape, working set, ...
};

// One timed batch of calls: the raw datum.
struct TrialLine {
  std::string variant;
  std::string point;                        // the point's key (PointSpec::key)
  int trial_no = 0;                         // 1-based within run x variant x point
  std::map<std::string, double> metrics;    // every declared metric the bench reported, the judged one always
  std::optional<std::int64_t> steps;        // calls timed in the batch, when the bench says
  std::optional<double> clock_mhz;          // SM clock during the trial, when measured
  bool throttled = false;                   // left out of the statistics, stored
};

// A measure request the bench answered without timing.
struct SkippedLine {
  std::string variant;
  std::string point;   // the point's key
  std::string status;  // "incorrect", "infeasible", "unknown"
  std::string reason;
};

class Protocol {
 public:
  // Compiles the schemas of every line kind and of the plan of `version` (1 or 2).
  static Result<Protocol> load(int version);

  int version() const { return version_; }

  // Parses one stdout line. A protocol error names the line number and the
  // field: "bench stdout line 14: time_us: must be > 0".
  Result<BenchLine> parse(std::string_view text, int line_no) const;

  // The plan for a run of these points, validated against its schema.
  Result<nlohmann::json> make_plan(const Manifest& manifest, const std::vector<PointSpec>& points,
                                   std::uint64_t seed) const;

  static nlohmann::json measure_request(const std::string& variant, const std::string& point, int trials);

  // A validated line of its kind, normalised; `point` is the point's key
  // (the caller has matched the line's point id to a PointSpec).
  CheckLine check(const nlohmann::json& line, const std::string& point) const;
  TrialLine trial(const nlohmann::json& line, const std::string& point) const;
  SkippedLine skipped(const nlohmann::json& line, const std::string& point) const;

 private:
  Protocol() = default;
  int version_ = 2;
  std::vector<std::pair<LineKind, schemas::Schema>> lines_;
  std::vector<schemas::Schema> plan_;  // one element; a vector only because Schema has no default state
};

// Checks a trial's metrics against the manifest: every name declared, the
// judged one present. The error is the message after "bench stdout line N: ".
Status check_trial_metrics(const TrialLine& trial, const Manifest& manifest);

}  // namespace perfwatch::runner
