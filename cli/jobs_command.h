// perfwatch jobs [requeue]: the daemon's queue -- every job with its state,
// attempts and message, a given-up commit among them (tables, or --json in
// the web API's jobs shape) -- and re-queueing a commit given up on.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

void add_jobs_command(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
