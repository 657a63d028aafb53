// perfwatch bench: one commit, built, swept, stored, summarised.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

// Adds the subcommand to `app`; its callback sets *exit_code.
void add_bench_command(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
