// One line of a bench's stdout through Protocol::parse: JSON parsing and the
// schema of every line kind (header, variant, check, trial, skipped, footer,
// error). A bench is any program the manifest names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runner/protocol.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const perfwatch::runner::Protocol protocol = [] {
    auto p = perfwatch::runner::Protocol::load();
    if (!p) std::abort();
    return std::move(*p);
  }();
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  auto parsed = protocol.parse(line, 7);
  if (!parsed) {
    perfwatch::fuzz::require_safe_text(parsed.error().to_string(), "the protocol error");
    return 0;
  }
  (void)perfwatch::json_text(parsed->doc);
  return 0;
}
