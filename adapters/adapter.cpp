#include "adapters/adapter.h"

#include <memory>

#include "adapters/command.h"
#include "adapters/google_benchmark.h"
#include "adapters/nvbench.h"
#include "adapters/protocol.h"
#include "adapters/session.h"
#include "adapters/settings.h"

namespace perfwatch::adapters {

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::kGoogleBenchmark: return "google-benchmark";
    case Kind::kCommand: return "command";
    case Kind::kNvbench: return "nvbench";
  }
  return "command";
}

std::optional<Kind> parse_kind(std::string_view name) {
  for (Kind k : {Kind::kGoogleBenchmark, Kind::kCommand, Kind::kNvbench})
    if (name == to_string(k)) return k;
  return std::nullopt;
}

namespace {

int refuse(std::ostream& out, std::ostream& log, const std::string& where, const std::string& message) {
  LineWriter(out).error(where, message);
  log << "perfwatch adapter: " << where << ": " << message << "\n";
  return 1;
}

}  // namespace

int run_adapter(Kind kind, const std::optional<std::string>& bench_json, std::istream& in, std::ostream& out,
                std::ostream& log) {
  if (!bench_json)
    return refuse(out, log, kBenchVariable,
                  "is not set: the runner passes the manifest's bench object in it (perfwatch adapter is started by "
                  "the runner, not by hand)");
  auto settings = parse_bench_settings(*bench_json);
  if (!settings) return refuse(out, log, settings.error().where, settings.error().message);
  if (!settings->adapter.empty() && settings->adapter != to_string(kind))
    return refuse(out, log, "bench.adapter",
                  "is '" + settings->adapter + "', but this is the " + to_string(kind) + " adapter");
  std::unique_ptr<Bench> bench;
  switch (kind) {
    case Kind::kGoogleBenchmark: bench = make_google_benchmark_bench(std::move(*settings), log); break;
    case Kind::kCommand: bench = make_command_bench(std::move(*settings), log); break;
    case Kind::kNvbench: bench = make_nvbench_bench(std::move(*settings), log); break;
  }
  return run_session(*bench, in, out, log);
}

}  // namespace perfwatch::adapters
