#include "web/auth.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace perfwatch::web {

namespace {

void digest(std::string_view text, unsigned char out[SHA256_DIGEST_LENGTH]) {
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out);
}

}  // namespace

AuthResult check_bearer(std::string_view authorization, std::string_view expected) {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() <= kScheme.size()) return AuthResult::kMissing;
  // The scheme is case-insensitive (RFC 7235); the token is not.
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    char a = authorization[i], b = kScheme[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return AuthResult::kMissing;
  }
  std::string_view token = authorization.substr(kScheme.size());
  unsigned char given[SHA256_DIGEST_LENGTH], wanted[SHA256_DIGEST_LENGTH];
  digest(token, given);
  digest(expected, wanted);
  bool same = CRYPTO_memcmp(given, wanted, SHA256_DIGEST_LENGTH) == 0;
  return same && !expected.empty() ? AuthResult::kOk : AuthResult::kInvalid;
}

}  // namespace perfwatch::web
