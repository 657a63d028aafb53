#include "faults.h"

#include <cstdlib>
#include <sstream>

namespace mla::bench {

std::optional<Faults> parse_faults(const char* text, std::string* error) {
  Faults faults;
  if (text == nullptr) return faults;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    if (item == "wrong_result") {
      faults.wrong_result = true;
      continue;
    }
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    std::optional<long long>* slot = key == "crash_after_trials"     ? &faults.crash_after_trials
                                     : key == "hang_after_trials"    ? &faults.hang_after_trials
                                     : key == "garbage_after_trials" ? &faults.garbage_after_trials
                                                                     : nullptr;
    if (slot == nullptr) {
      *error = "MLA_BENCH_FAULT: unknown fault \"" + key +
               "\" (known: crash_after_trials=N, hang_after_trials=N, garbage_after_trials=N, wrong_result)";
      return std::nullopt;
    }
    char* end = nullptr;
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 0) {
      *error = "MLA_BENCH_FAULT: " + key + ": needs a count >= 0, as in " + key + "=3";
      return std::nullopt;
    }
    *slot = n;
  }
  return faults;
}

}  // namespace mla::bench
