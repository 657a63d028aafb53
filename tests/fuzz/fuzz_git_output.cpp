// What perfwatch reads from git (runner/git_output.h): `git show` of a
// commit, its trailers, `git rev-list`; and the text functions every such
// field passes through. A commit's author and message are any bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "runner/git_output.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using perfwatch::fuzz::require_safe_text;
  const std::string_view out(reinterpret_cast<const char*>(data), size);

  if (auto info = perfwatch::runner::parse_commit_show(out, "repo: sha")) {
    require_safe_text(info->author_name, "author_name");
    require_safe_text(info->author_email, "author_email");
    require_safe_text(info->subject, "subject");
    require_safe_text(info->message, "message");
  } else {
    require_safe_text(info.error().to_string(), "the git show error");
  }
  for (const auto& [key, value] : perfwatch::runner::parse_trailers(out)) {
    require_safe_text(key, "a trailer key");
    require_safe_text(value, "a trailer value");
  }
  if (auto shas = perfwatch::runner::parse_rev_list(out, "repo"); !shas) {
    require_safe_text(shas.error().to_string(), "the rev-list error");
  }

  const std::string safe = perfwatch::terminal_safe(out);
  for (std::size_t i = 0; i < safe.size(); ++i) {
    const auto c = static_cast<unsigned char>(safe[i]);
    const bool c1 = c == 0xC2 && i + 1 < safe.size() && static_cast<unsigned char>(safe[i + 1]) <= 0x9F;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F || c1) std::abort();
  }
  require_safe_text(safe, "terminal_safe");
  return 0;
}
