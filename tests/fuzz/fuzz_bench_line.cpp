// One line of a bench's stdout through Protocol::parse, in both protocol
// versions: JSON parsing and the schema of every line kind (header, variant,
// check, trial, skipped, footer, error), then the normalisation of a valid
// check, trial or skipped line. A bench is any program the manifest names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runner/protocol.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using perfwatch::runner::LineKind;
  using perfwatch::runner::Protocol;
  static const Protocol protocols[] = {[] {
                                         auto p = Protocol::load(1);
                                         if (!p) std::abort();
                                         return std::move(*p);
                                       }(),
                                       [] {
                                         auto p = Protocol::load(2);
                                         if (!p) std::abort();
                                         return std::move(*p);
                                       }()};
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  for (const Protocol& protocol : protocols) {
    auto parsed = protocol.parse(line, 7);
    if (!parsed) {
      perfwatch::fuzz::require_safe_text(parsed.error().to_string(), "the protocol error");
      continue;
    }
    (void)perfwatch::json_text(parsed->doc);
    if (parsed->kind == LineKind::kCheck) (void)protocol.check(parsed->doc, "k");
    if (parsed->kind == LineKind::kTrial) (void)protocol.trial(parsed->doc, "k");
    if (parsed->kind == LineKind::kSkipped) (void)protocol.skipped(parsed->doc, "k");
  }
  return 0;
}
