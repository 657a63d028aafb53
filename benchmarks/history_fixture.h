// The database the web benchmarks read: the web tests' fixture builder
// (tests/web/fixture_builder) without its story -- `commits` commits on one
// branch, 2 runs each, 2 variants x `points` sweep points x 5 trials per run
// (1000 x 2 x 2 x 50 x 5 = 1,000,000 trials by default), summaries, pooled
// values, comparisons and flags, noise bands.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fixture_builder.h"

namespace perfwatch::benchmarks {

inline web::testing::FixtureSpec history_fixture_spec(int commits = 1000, int points = 50) {
  web::testing::FixtureSpec spec;
  spec.commits = commits;
  spec.runs_per_commit = 2;
  spec.trials_per_cell = 5;
  spec.variants = {"bt32_w4_s2", "bt64_w4_s2"};
  spec.batches.clear();
  for (int p = 1; p <= points; ++p) spec.batches.push_back(static_cast<std::int64_t>(p) * 2);
  spec.story = false;
  spec.verbose = true;
  return spec;
}

// `text` as a query parameter's value: a point's key is "batch=2,dtype=bf16,...",
// whose '=' and ',' must reach the server as data.
inline std::string query_value(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

}  // namespace perfwatch::benchmarks
