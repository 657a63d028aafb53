// Version 2 of the bench protocol (schemas/bench/v2/) as an adapter speaks
// it: the plan and the measure requests it reads on stdin, validated against
// their schemas and parsed into typed values, and the writer of its stdout
// lines (one JSON object a line, flushed at once so that the runner's idle
// timeout sees progress).
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "schemas/schema.h"

namespace perfwatch::adapters {

struct Variant {
  std::string name;
  nlohmann::json params = nlohmann::json::object();  // name -> integer, number, string or boolean
};

struct Point {
  std::string id;                                     // the label requests and lines name it by
  nlohmann::json axes = nlohmann::json::object();     // axis -> integer, number or string
};

struct Metric {
  std::string name;
  std::string unit;
  bool higher_is_better = false;
};

struct Plan {
  std::vector<Variant> variants;
  std::vector<Point> points;
  std::vector<Metric> metrics;
  std::string judged_metric;
  nlohmann::json params = nlohmann::json::object();  // the manifest's bench.params, untouched
  std::string backend = "auto";
  std::uint64_t seed = 0;
  std::optional<double> min_trial_ms;                 // absent when the plan has no timing
  std::optional<double> warmup_ms;

  // nullptr when the plan has none of that name.
  const Variant* variant(std::string_view name) const;
  const Point* point(std::string_view id) const;
  const Metric* metric(std::string_view name) const;
  // "time_us, tokens_per_s": for error messages.
  std::string metric_names() const;
};

struct MeasureRequest {
  std::string variant;
  std::string point;
  int trials = 1;
};

// Reads the runner's side of a run: the plan line, then measure requests.
class RequestReader {
 public:
  // Compiles the plan and measure schemas; fails only if they are missing
  // from the binary (a build error).
  static Result<RequestReader> load();

  // Reads the first line. Fails (kProtocol, where = "plan") on end of input,
  // invalid JSON, a line the v2 plan schema rejects (the message names the
  // field), a judged metric that is not declared, or repeated names.
  Result<Plan> read_plan(std::istream& in);

  // The next request; nullopt when stdin is closed (blank lines are skipped).
  // Fails (kProtocol, where = "measure request <n>") on a line that is not a
  // valid request, or that names a variant or point the plan does not have.
  Result<std::optional<MeasureRequest>> next(std::istream& in, const Plan& plan);

 private:
  RequestReader() = default;
  std::vector<schemas::Schema> schemas_;  // [0] plan, [1] measure
  int requests_ = 0;
};

// Parses and checks one plan document (what read_plan does after reading).
Result<Plan> parse_plan(const nlohmann::json& doc, const schemas::Schema& plan_schema);

// Writes the bench's side: one JSON object a line, flushed. Counts the trial
// lines for the footer. Never throws on a closed stdout (the runner may have
// gone away); the caller notices at the next read.
class LineWriter {
 public:
  explicit LineWriter(std::ostream& out) : out_(out) {}
  void write(const nlohmann::json& line);
  // {"kind":"error","where":...,"message":...}
  void error(std::string_view where, std::string_view message);
  int trials_written() const { return trials_; }

 private:
  std::ostream& out_;
  int trials_ = 0;
};

}  // namespace perfwatch::adapters
