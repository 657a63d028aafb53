// perfwatch experiment add|conclude|show: experiments by hand.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

void add_experiment_command(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
