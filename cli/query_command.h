// perfwatch query experiments|runs|flags|history|webhooks, and perfwatch flags
// [ack]: what the store knows, for people (tables) and tools (--json, in the
// web API's shapes).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

void add_query_command(CLI::App& app, const GlobalOptions& global, int* exit_code);
void add_flags_command(CLI::App& app, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
