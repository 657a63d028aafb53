// A mistyped subcommand, caught before CLI11 parses: CLI11 itself would say
// "a subcommand is required" or "the following argument was not expected",
// which does not say what to type. This walks the command line the way the
// parser will and, at the first word that names no subcommand where one is
// expected, says so with the nearest valid one and the full list.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace perfwatch::cli {

// "unknown command 'flgs': did you mean 'flags'? (commands: bench, watch, ...)"
// for `perfwatch flgs ...`, "a command is needed after 'query': one of ..."
// when none is given where one is required; nullopt when every word where a
// subcommand is expected names one (other errors, --help and --version are
// CLI11's).
std::optional<std::string> mistyped_command(const CLI::App& app, const std::vector<std::string>& args);

// The candidate nearest to `word` by edit distance (ties: the first), or ""
// when none is within half the word's length (then nothing is suggested).
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace perfwatch::cli
