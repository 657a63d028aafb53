// perfwatch noise: A/A calibration of the noise bands.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

void add_noise_command(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
