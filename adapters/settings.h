// The manifest's bench object, as the runner hands it to `perfwatch adapter`
// (JSON in the environment variable PERFWATCH_ADAPTER_BENCH): validated
// against the bench object of schemas/manifest.v2.schema.json, so that an
// error names the manifest field ("bench.extract.tokens_per_s.regex: ...").
// Each adapter reads its own section (google_benchmark, extract, nvbench)
// from `doc`.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace perfwatch::adapters {

inline constexpr const char* kBenchVariable = "PERFWATCH_ADAPTER_BENCH";

struct BenchSettings {
  nlohmann::json doc = nlohmann::json::object();  // the bench object as given
  std::string adapter;                   // bench.adapter; "" when absent
  std::string command;                   // bench.command
  std::map<std::string, std::string> env;  // bench.env: templates (see placeholders.h)
  double idle_timeout_s = 300;           // bench.idle_timeout_s: the runner's hang limit
  // bench.trial_timeout_s: the longest one execution of the benchmarked
  // program may run per trial it measures; default 90% of idle_timeout_s, so
  // that the adapter reports a stuck program before the runner counts the
  // adapter itself as hung.
  double trial_timeout_s = 270;
  std::filesystem::path workdir;         // where the programs run: the current directory
};

// Parses the text of PERFWATCH_ADAPTER_BENCH. Fails (kInvalidArgument) on
// text that is not a JSON object, an object the manifest schema rejects
// (where = "<where>: bench.<field>"), or a trial_timeout_s that is not below
// idle_timeout_s.
Result<BenchSettings> parse_bench_settings(std::string_view text, std::string_view where = kBenchVariable);

}  // namespace perfwatch::adapters
