// What the subcommands share: opening the database, finding the repo a
// query is about, printing text and errors.
#pragma once

#include <optional>
#include <string>

#include "cli/options.h"
#include <nlohmann/json.hpp>

#include "common/result.h"
#include "daemon/executor.h"
#include "store/database.h"
#include "store/ids.h"

namespace perfwatch::cli {

// Opens (creating its folder) the database; prints the error and returns
// nullopt when it cannot.
std::optional<store::Database> open_database(const GlobalOptions& global);
// Opens a database that must exist already: a query, a flag's triage or a
// job listing never creates an empty one where a mistyped --db points.
// Prints what to pass instead and returns nullopt when there is none.
std::optional<store::Database> open_existing_database(const GlobalOptions& global);

// The repo of `path` (as `perfwatch watch --repo` recorded it), or, with an
// empty path, the only repo in the database. Errors say what to pass.
Result<store::RepoId> find_repo(store::Database& db, const std::string& path);

// find_repo for a --repo option: nullopt when it is empty (the view then
// takes the only repo).
Result<std::optional<store::RepoId>> repo_of(store::Database& db, const std::string& path);

// A JSON document on stdout, indented (the API's shapes).
void print_json(const nlohmann::json& doc);

// Writes text meant for a person to stdout through terminal_safe
// (common/text.h): a commit subject, a bench's name or message cannot send
// control sequences to the user's terminal. JSON output does not need it
// (JSON escapes control characters itself).
void print_text(const std::string& text);

// Prints "perfwatch: <error>" on stderr and returns the exit code for it.
int report_error(const Error& error);

// The executor an --executor config file names (daemon/executor.h); the
// local one when `path` is empty.
Result<daemon::Executor> load_executor_option(const std::string& path);
// The same for an error of a view (views/lookup.h), whose where is the
// request field at fault: printed as the flag ("--point: ...").
int report_view_error(const Error& error);

}  // namespace perfwatch::cli
