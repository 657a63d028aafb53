// What the API answers when a request cannot be served: an HTTP status and
// the body {"error": {"code", "field", "message"}} (schemas/api/error.schema.json).
//
// Messages name the thing and what is wrong with it ("limit: must be an
// integer from 1 to 1000"); a 500 never carries internals (file paths, SQL,
// exception text): those go to the server's log only.
#pragma once

#include <expected>
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

// The reply of an API handler: a JSON document (200) or an error.
using Reply = std::expected<nlohmann::json, ApiError>;

ApiError bad_parameter(std::string field, std::string message);  // 400
ApiError not_found(std::string field, std::string message);      // 404
ApiError internal_error();                                       // 500, says nothing more

// Maps a store error: kInvalidArgument -> 400 (naming `field`), kNotFound ->
// 404, kTimeout -> 503 (the database was busy), anything else -> 500 (the
// details are logged to stderr, not sent).
ApiError from_store(const Error& error, std::string field = "");

}  // namespace perfwatch::web
