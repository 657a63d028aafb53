// Bearer tokens for the API's writes.
#pragma once

#include <string>
#include <string_view>

namespace perfwatch::web {

enum class AuthResult {
  kOk,
  kMissing,  // no "Authorization: Bearer ..." header
  kInvalid,  // a token, not the right one
};

// Checks an Authorization header value against `expected` (non-empty). The
// comparison takes the same time whatever the tokens' contents and lengths:
// both are hashed (SHA-256) and the digests compared with CRYPTO_memcmp.
AuthResult check_bearer(std::string_view authorization, std::string_view expected);

}  // namespace perfwatch::web
