// Test-only fault injection, so the runner's tests can make the real bench
// misbehave in each way a broken bench does. Read from MLA_BENCH_FAULT, a
// comma-separated list of:
//   crash_after_trials=N    abort() right after the N-th trial line
//   hang_after_trials=N     stop responding after the N-th trial line (sleep forever)
//   garbage_after_trials=N  after the N-th trial line write one line that is not JSON, then go on
//   wrong_result            the CPU backend skips each split's last tile, so every
//                           check fails and the bench must report incorrect, no time
// N = 0 fires right after the variant lines.
#pragma once

#include <optional>
#include <string>

namespace mla::bench {

struct Faults {
  std::optional<long long> crash_after_trials;
  std::optional<long long> hang_after_trials;
  std::optional<long long> garbage_after_trials;
  bool wrong_result = false;

  bool any() const { return crash_after_trials || hang_after_trials || garbage_after_trials || wrong_result; }
};

// Parses the variable's text (null or empty: no faults). On a bad value
// returns nullopt and says why in *error.
std::optional<Faults> parse_faults(const char* text, std::string* error);

}  // namespace mla::bench
