// perfwatch watch: the daemon. Follows a branch, benchmarks every new
// commit, judges it against its noise band, records flags and experiments;
// serves the dashboard with --port.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

void add_watch_command(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
