// The JSON Schemas under schemas/ are the single source of truth for every
// document perfwatch reads or writes: the manifest, the bench plan and its
// lines, the API's responses. They are compiled into the binary; this is the
// one place that loads and applies them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace perfwatch::schemas {

// Text of a file under schemas/, e.g. "bench/trial.schema.json" or
// "sql/001_initial.sql"; nullopt when there is no such file.
std::optional<std::string_view> file(std::string_view path);

// Every embedded path, sorted.
std::vector<std::string> paths();

// A compiled schema. Cheap to move; validation is thread-safe.
class Schema {
 public:
  // Loads and compiles schemas/<path>. $refs to other files under schemas/
  // resolve relative to it. Fails if the file is missing or not a schema.
  static Result<Schema> load(std::string_view path);

  // OK, or an invalid_argument error naming the first offending field as a
  // JSON path, e.g. where = "<where>: sweep.batch[2]".
  Status validate(const nlohmann::json& doc, std::string_view where) const;

  const std::string& path() const;

  Schema(Schema&&) noexcept;
  Schema& operator=(Schema&&) noexcept;
  ~Schema();

 private:
  struct Impl;
  explicit Schema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfwatch::schemas
