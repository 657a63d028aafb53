#include "common/result.h"

namespace perfwatch {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kProtocol: return "protocol_error";
    case ErrorCode::kIo: return "io_error";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kFailed: return "failed";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

std::string Error::to_string() const {
  if (where.empty()) return message;
  return where + ": " + message;
}

}  // namespace perfwatch
