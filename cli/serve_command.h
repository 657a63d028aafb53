// perfwatch serve: the dashboard and the JSON API over an existing database,
// read-only (nothing this process does writes to it).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

// `perfwatch serve --db FILE --port N [--bind ADDR]`. Binds 127.0.0.1 unless
// --bind says otherwise; --port 0 picks a free port. Prints the URL on
// stdout ("perfwatch: serving http://127.0.0.1:8080/"), serves until SIGINT
// or SIGTERM, then stops cleanly (exit 0). Adds the subcommand to `app`; its
// callback sets *exit_code.
void add_serve_command(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
