// The manifest parser over any bytes: JSON parsing, the schema, then the
// typed reading (runner/manifest.cpp). A manifest comes from the watched repo.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/manifest.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using nlohmann::json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  auto m = perfwatch::runner::parse_manifest(doc, "perfwatch.json");
  if (!m) {
    perfwatch::fuzz::require_safe_text(perfwatch::json_text(json(m.error().to_string())), "the error");
    return 0;
  }
  if (m->variants.empty() || m->points.empty() || m->trials.min > m->trials.max) std::abort();
  (void)perfwatch::json_text(m->source);
  return 0;
}
