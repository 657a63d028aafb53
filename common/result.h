// Errors as values, shared by every part of perfwatch.
//
// A fallible call returns Result<T>: either the value or an Error that says
// what went wrong and where, in two parts -- the thing, then what is wrong
// with it:  "perfwatch.json: sweep.batch[2]: must be a positive integer".
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace perfwatch {

enum class ErrorCode {
  kInvalidArgument,  // bad input from a user: a manifest, a flag, a request
  kNotFound,         // an id, a commit, a file that does not exist
  kProtocol,         // a child process wrote something that breaks the bench protocol
  kIo,               // the file system, a pipe, git, the database
  kTimeout,          // something ran past its limit
  kFailed,           // a child process or a build failed
  kInternal,         // a bug in perfwatch
};

const char* to_string(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string where;    // the file, field or object the error is about; may be empty
  std::string message;  // what is wrong with it

  // "where: message", or just the message when there is no where.
  std::string to_string() const;
};

inline Error invalid_argument(std::string where, std::string message) {
  return {ErrorCode::kInvalidArgument, std::move(where), std::move(message)};
}
inline Error not_found(std::string where, std::string message) {
  return {ErrorCode::kNotFound, std::move(where), std::move(message)};
}
inline Error io_error(std::string where, std::string message) {
  return {ErrorCode::kIo, std::move(where), std::move(message)};
}
inline Error protocol_error(std::string where, std::string message) {
  return {ErrorCode::kProtocol, std::move(where), std::move(message)};
}

template <class T>
using Result = std::expected<T, Error>;

// For calls that return nothing on success.
using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(Error e) { return std::unexpected(std::move(e)); }

}  // namespace perfwatch
