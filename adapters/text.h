// Small text helpers for the adapters' messages: a user who reads an error
// must see the line the adapter looked at and the names it could have meant.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfwatch::adapters {

// The lines of `text` without their line ends ("\n" or "\r\n"); a last line
// without a newline counts, an empty text has none.
std::vector<std::string_view> split_lines(std::string_view text);

// The last line that is not blank; "" when there is none.
std::string_view last_line(std::string_view text);

// The last `lines` non-blank lines, joined by " | ", at most `max_bytes`
// (cut at the front): a stderr tail that fits in one message.
std::string tail_lines(std::string_view text, size_t lines = 5, size_t max_bytes = 600);

// 'text' in single quotes, cut to max_bytes with "..." when longer.
std::string quote(std::string_view text, size_t max_bytes = 200);

// The whole of `text` (surrounding blanks ignored) as a number, as strtod
// reads it ("1234.5", "1.2e+06", "-3"); nullopt for anything else, "nan",
// "inf" and a value outside the double range included.
std::optional<double> parse_number(std::string_view text);

// Up to `count` names of `names` closest to `wanted`: the longest common
// prefix first, then the smallest edit distance; names far from it (more
// than two thirds of the longer one changed) left out.
std::vector<std::string> nearest(const std::vector<std::string>& names, std::string_view wanted, size_t count = 3);

// "'a', 'b', 'c'", or "none" for an empty list.
std::string quote_list(const std::vector<std::string>& names);

// The words of a command line split at spaces and tabs (no shell quoting).
std::vector<std::string> split_words(std::string_view text);

}  // namespace perfwatch::adapters
