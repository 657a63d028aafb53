// An API request's query parameters (web/query_params.h), as a URL query
// "k=v&k=v" that the HTTP layer has decoded: every getter on every name.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "web/query_params.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using perfwatch::web::QueryParams;
  std::string_view query(reinterpret_cast<const char*>(data), size);
  QueryParams::Raw raw;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    const auto eq = pair.find('=');
    raw.emplace(std::string(pair.substr(0, eq)), eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
  }
  QueryParams q(raw, {"limit", "id", "kind", "repo", "commit", "search", "acked", "param"}, {"param"});
  (void)q.integer("limit", 50, 1, 1000);
  (void)q.optional_integer("limit", -5, 5);
  (void)q.id("id");
  (void)q.word("kind", {"regression", "improvement"});
  (void)q.name("repo");
  (void)q.sha("commit");
  (void)q.text("search", 200);
  (void)q.boolean("acked", false);
  (void)q.all_names("param");
  // The error may quote the raw parameter; the server writes it with
  // json_text's replacement, which must not throw.
  if (!q.ok()) (void)perfwatch::json_text(q.error().body());
  for (const auto& [k, v] : raw) {
    if (auto id = perfwatch::web::parse_id(k); id && *id <= 0) std::abort();
  }
  return 0;
}
