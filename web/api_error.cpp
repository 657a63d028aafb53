#include "web/api_error.h"

#include <cstdio>

namespace perfwatch::web {

nlohmann::json ApiError::body() const {
  nlohmann::json e = {{"code", code}, {"message", message}};
  if (!field.empty()) e["field"] = field;
  return {{"error", std::move(e)}};
}

ApiError bad_parameter(std::string field, std::string message) {
  return {400, "bad_parameter", std::move(field), std::move(message)};
}

ApiError not_found(std::string field, std::string message) {
  return {404, "not_found", std::move(field), std::move(message)};
}

ApiError internal_error() { return {500, "internal", "", "internal error; the server's log says more"}; }

ApiError from_store(const Error& error, std::string field) {
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
      return bad_parameter(std::move(field), error.message);
    case ErrorCode::kNotFound:
      return not_found(std::move(field), error.message);
    case ErrorCode::kTimeout:
      std::fprintf(stderr, "perfwatch web: %s\n", error.to_string().c_str());
      return {503, "busy", "", "the database is busy; try again"};
    default:
      std::fprintf(stderr, "perfwatch web: %s\n", error.to_string().c_str());
      return internal_error();
  }
}

}  // namespace perfwatch::web
