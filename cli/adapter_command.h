// perfwatch adapter --kind google-benchmark|command|nvbench: hidden from
// --help, started by the runner (not by people) for a manifest whose
// bench.adapter names an adapter. It speaks version 2 of the bench protocol
// on stdin/stdout around a program that does not (adapters/README.md).
#pragma once

#include <CLI/CLI.hpp>

namespace perfwatch::cli {

// Reads the manifest's bench object from the environment variable
// PERFWATCH_ADAPTER_BENCH, the plan and measure requests from stdin; writes
// protocol lines on stdout and its log on stderr. Sets *exit_code: 0 after
// the footer, 1 after an error line. Adds the subcommand to `app`.
void add_adapter_command(CLI::App& app, int* exit_code);

}  // namespace perfwatch::cli
