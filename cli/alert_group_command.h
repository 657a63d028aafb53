// perfwatch flags groups | flags triage: the alert groups (the flags of one
// commit on one testbed) with their summaries, and triaging a whole group
// with a reason -- the same documents and writes as the API's
// /api/v1/alert-groups.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace perfwatch::cli {

// Adds `groups` and `triage` under the `flags` command.
void add_alert_group_commands(CLI::App* flags, const GlobalOptions& global, int* exit_code);

}  // namespace perfwatch::cli
