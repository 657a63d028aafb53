// What the API answers when a request cannot be served: an HTTP status and
// the body {"error": {"code", "field", "message"}} (schemas/api/error.schema.json).
//
// Messages name the thing and what is wrong with it ("limit: must be an
// integer from 1 to 1000"); a 500 never carries internals (file paths, SQL,
// exception text): those go to the server's log only.
#pragma once

#include <expected>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace perfwatch::web {

struct ApiError {
  int status = 500;
  std::string code;     // machine-readable: "bad_parameter", "not_found", ...
  std::string field;    // the parameter or body field at fault; may be empty
  std::string message;  // for people

  nlohmann::json body() const;
};

// The body of a 200: a JSON document, or text a handler serialized itself
// (the history, written with JsonWriter; /metrics, which is not JSON).
struct Body {
  Body(nlohmann::json document) : json(std::move(document)) {}  // NOLINT: implicit on purpose
  static Body text(std::string serialized, std::string content_type = "application/json; charset=utf-8") {
    Body b(nullptr);
    b.serialized = std::move(serialized);
    b.content_type = std::move(content_type);
    return b;
  }
  nlohmann::json json;
  std::optional<std::string> serialized;
  std::string content_type = "application/json; charset=utf-8";
};

// The reply of an API handler: a body (200) or an error.
using Reply = std::expected<Body, ApiError>;

ApiError bad_parameter(std::string field, std::string message);  // 400
ApiError not_found(std::string field, std::string message);      // 404
ApiError internal_error();                                       // 500, says nothing more

// Maps a store error: kInvalidArgument -> 400 (naming `field`), kNotFound ->
// 404, kTimeout -> 503 (the database was busy), anything else -> 500 (the
// details are logged to stderr, not sent).
ApiError from_store(const Error& error, std::string field = "");

}  // namespace perfwatch::web
