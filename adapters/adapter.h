// `perfwatch adapter --kind K`: runs a benchmark program that does not speak
// the bench protocol as if it did. The runner starts it, in the bench's
// workdir, for a manifest whose bench.adapter is K, with the manifest's bench
// object as JSON in PERFWATCH_ADAPTER_BENCH and the plan and measure requests
// on stdin, exactly as it starts a native bench (adapters/README.md).
#pragma once

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace perfwatch::adapters {

enum class Kind { kGoogleBenchmark, kCommand, kNvbench };

// "google-benchmark", "command", "nvbench": the names bench.adapter uses.
const char* to_string(Kind kind);
std::optional<Kind> parse_kind(std::string_view name);

// One run. `bench_json` is the text of PERFWATCH_ADAPTER_BENCH (nullopt when
// the variable is not set). Protocol lines go to `out`, the log (one line per
// execution of the program, and every error) to `log`. Returns the exit
// status: 0 after the footer, 1 after an error line -- which is the first
// line when the bench object is missing or invalid, names another adapter,
// or the program cannot be prepared.
int run_adapter(Kind kind, const std::optional<std::string>& bench_json, std::istream& in, std::ostream& out,
                std::ostream& log);

}  // namespace perfwatch::adapters
