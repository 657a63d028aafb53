// Drives an adapter as the runner will: `perfwatch adapter --kind K` started
// in the bench's workdir, the manifest's bench object in
// PERFWATCH_ADAPTER_BENCH, a plan and measure requests on stdin. Then checks
// what came back against schemas/bench/v2/ line by line and against the
// protocol's order: header, one variant line per variant, per request a check
// the first time (only ok is followed by trials), trials numbered from 1 per
// cell, or one skipped line; a footer counting the trials -- or an error line,
// last, with a non-zero exit.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfwatch::testing {

struct AdapterRun {
  int exit_code = -1;
  std::vector<nlohmann::json> lines;  // stdout, one object a line (a non-JSON line is kept as a string)
  std::string log;                    // stderr

  // The lines of one kind, in order.
  std::vector<nlohmann::json> of_kind(const std::string& kind) const;
  // The trials of a variant at a point, in order.
  std::vector<nlohmann::json> trials(const std::string& variant, const std::string& point) const;
  // The check line of a variant at a point; null when there is none.
  nlohmann::json check(const std::string& variant, const std::string& point) const;
  // Everything, for failure messages.
  std::string dump() const;
};

// A v2 plan. `points` are {"id": ..., "axes": {...}}; metrics {"name","unit","direction"}.
nlohmann::json plan(const nlohmann::json& variants, const nlohmann::json& points, const nlohmann::json& metrics,
                    const std::string& judged, const nlohmann::json& extra = nlohmann::json::object());
nlohmann::json measure(const std::string& variant, const std::string& point, int trials = 1);

// Runs the real perfwatch binary (PERFWATCH_BIN). `bench` null leaves
// PERFWATCH_ADAPTER_BENCH unset.
AdapterRun run_adapter(const std::string& kind, const nlohmann::json& bench, const std::vector<nlohmann::json>& input,
                       const std::filesystem::path& workdir);

// "" when every line validates against its v2 schema and the run keeps the
// protocol's order for `input` (the plan, then the requests); else the first
// problem, naming the line.
std::string protocol_problems(const AdapterRun& run, const std::vector<nlohmann::json>& input);

// The source folder of these tests (scripts/, gbench_suite/).
std::filesystem::path tests_dir();

}  // namespace perfwatch::testing
