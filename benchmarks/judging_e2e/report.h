// The figures, printed: a table for the terminal, the markdown committed as
// benchmarks/judging_e2e.md, and JSON for machines.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/judging_e2e/scenario.h"
#include "benchmarks/judging_e2e/scorer.h"

namespace judging_e2e {

struct ScenarioResult {
  Scenario scenario;
  Score total;                  // summed over its histories
};

// How the figures were made, for the record.
struct RunInfo {
  std::string command;          // the command line, as given
  std::string label;            // e.g. "before the judge/ rework (main at 6b4ef92)"
  std::string date;             // UTC
  std::string machine;          // CPU model, cores
  std::string perfwatch;        // the binary measured
  std::string perfwatch_version;
  int commits = 0, histories = 0, jobs = 1;
  unsigned long long seed = 0;
  double wall_s = 0;
};

std::string text_table(const std::vector<ScenarioResult>& results);
std::string markdown(const std::vector<ScenarioResult>& results, const RunInfo& info);
nlohmann::json to_json(const std::vector<ScenarioResult>& results, const RunInfo& info);

}  // namespace judging_e2e
