// The google-benchmark adapter (bench.adapter = "google-benchmark"): watches
// a Google Benchmark binary (written for 1.7, Debian 12's libbenchmark-dev;
// the flags and the JSON it reads are the same in 1.8 and later).
//
// bench.command is the binary and any fixed arguments, split at spaces (no
// shell). bench.google_benchmark.name is the template of the benchmark that
// measures one variant at one point ("BM_decode<{block_t}>/{batch}/real_time",
// see placeholders.h). Before the header the adapter lists the binary's
// benchmarks (--benchmark_list_tests=true): when the template names none of
// them for any variant x point, that is an error naming the field, with the
// nearest names the binary has.
//
// A measure request for k trials is one execution of the binary:
//   --benchmark_filter=^<name>$ (the name with regex characters escaped)
//   --benchmark_format=json --benchmark_repetitions=k
//   --benchmark_min_time=<plan's min_trial_ms> and
//   --benchmark_min_warmup_time=<plan's warmup_ms> (where the binary's --help
//   lists it), before bench.google_benchmark.args, which may override them;
//   a benchmark's own MinTime() overrides both, as Google Benchmark does.
// Each repetition (run_type "iteration"; the aggregates are ignored) is one
// trial. Each metric comes from the field bench.google_benchmark.fields
// names: real_time or cpu_time (converted to microseconds by time_unit),
// items_per_second, bytes_per_second, or a user counter, taken as it is;
// with no fields, the judged metric is real_time in microseconds (only when
// lower is better). steps = iterations.
//
// The check of a variant at a point is its first execution: ok when the
// benchmark ran; infeasible when the binary does not have it (with the
// nearest names) or reports it skipped or errored (error_occurred /
// error_message; skipped / skip_message from 1.8); incorrect when the binary
// exits non-zero, is killed or times out (bench.trial_timeout_s per trial
// asked for). A field the result lacks or a value that is not a number (a
// NaN counter) is an error naming bench.google_benchmark.fields.<metric>.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "adapters/session.h"
#include "adapters/settings.h"
#include "common/result.h"

namespace perfwatch::adapters {

std::unique_ptr<Bench> make_google_benchmark_bench(BenchSettings settings, std::ostream& log);

// The filter that selects exactly `name`: ^name$ with the characters of
// POSIX extended regular expressions escaped (Google Benchmark compiles the
// filter as one).
std::string exact_filter(std::string_view name);

// Parses what --benchmark_format=json wrote. Google Benchmark writes NaN and
// Infinity bare (not JSON); they become null. Fails (kProtocol) when the text
// is not a JSON object with a "benchmarks" array.
Result<nlohmann::json> parse_benchmark_json(std::string_view text);

}  // namespace perfwatch::adapters
