// Checked reading of a request's query parameters. Every getter validates
// its parameter; the first problem is kept and reported as a 400 naming the
// parameter, so a handler reads all it needs and then checks once:
//
//   QueryParams q(request.params, {"repo", "limit"});
//   auto limit = q.integer("limit", 50, 1, 1000);
//   if (!q.ok()) return std::unexpected(q.error());
//
// A parameter the handler does not know is an error too ("limt: unknown
// parameter; known: repo, limit"), as is a second value of a parameter
// that takes one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "web/api_error.h"

namespace perfwatch::web {

class QueryParams {
 public:
  using Raw = std::multimap<std::string, std::string>;

  // `known`: the names this endpoint accepts; `repeatable`: those of them
  // that may be given more than once.
  QueryParams(const Raw& raw, std::initializer_list<std::string_view> known,
              std::initializer_list<std::string_view> repeatable = {});

  bool ok() const { return !error_.has_value(); }
  const ApiError& error() const { return *error_; }

  // An integer in [min, max]; `fallback` when absent.
  std::int64_t integer(std::string_view name, std::int64_t fallback, std::int64_t min, std::int64_t max);
  std::optional<std::int64_t> optional_integer(std::string_view name, std::int64_t min, std::int64_t max);
  // A row id: a positive integer.
  std::optional<std::int64_t> id(std::string_view name);
  // One of `words`.
  std::optional<std::string> word(std::string_view name, std::initializer_list<std::string_view> words);
  // A name as git and the manifest write them: 1-200 of [A-Za-z0-9_.+/=:-].
  std::optional<std::string> name(std::string_view name);
  // A commit sha or prefix: 4-64 hex digits (lower-cased).
  std::optional<std::string> sha(std::string_view name);
  // Free text (a search): at most max_chars bytes, no control characters.
  std::optional<std::string> text(std::string_view name, std::size_t max_chars);
  // "1"/"true" or "0"/"false".
  bool boolean(std::string_view name, bool fallback);
  // Every value of a repeatable parameter, each checked as name() checks.
  std::vector<std::string> all_names(std::string_view name);

  // Records an error found by the caller (the first one wins).
  void fail(ApiError error);

 private:
  std::optional<std::string> single(std::string_view name);

  const Raw& raw_;
  std::optional<ApiError> error_;
};

// A path segment captured as digits: the id, or a 400 naming `field`.
Reply::error_type parse_id_error(std::string_view field);
std::optional<std::int64_t> parse_id(std::string_view digits);

}  // namespace perfwatch::web
