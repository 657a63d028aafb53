// What every fuzz target checks besides "no crash, no sanitizer report":
// text perfwatch produces from hostile input is valid UTF-8 and serialises.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/text.h"

namespace perfwatch::fuzz {

// Aborts (a finding for libFuzzer) when `text` is not valid UTF-8 or cannot
// be written as JSON.
inline void require_safe_text(std::string_view text, const char* what) {
  if (!is_valid_utf8(text)) {
    std::fprintf(stderr, "fuzz: %s is not valid UTF-8\n", what);
    std::abort();
  }
  (void)json_text(nlohmann::json(std::string(text)));
}

}  // namespace perfwatch::fuzz
