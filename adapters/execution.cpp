#include "adapters/execution.h"

#include <cstdio>

#include "adapters/text.h"

namespace perfwatch::adapters {

Execution execute(const runner::ProcessSpec& spec) {
  Execution e;
  if (!spec.command.empty()) {
    e.shown = "`" + spec.command + "`";
  } else {
    std::string line;
    for (const auto& a : spec.argv) line += (line.empty() ? "" : " ") + a;
    e.shown = "`" + line + "`";
  }
  e.limit_s = spec.timeout_s;
  auto captured = runner::run_captured(spec);
  e.result = std::move(captured.result);
  e.out = std::move(captured.out);
  return e;
}

std::string stderr_tail(const Execution& e) {
  std::string tail = tail_lines(e.result.tail);
  return tail.empty() ? "" : "; stderr ends: " + quote(tail, 600);
}

std::string failure(const Execution& e) {
  using runner::Outcome;
  std::string what;
  if (e.result.outcome == Outcome::kTimedOut) {
    char buf[96];
    double limit = e.limit_s > 0 ? e.limit_s : e.result.wall_s;
    std::snprintf(buf, sizeof buf, limit < 10 ? "timed out after %.1f s (bench.trial_timeout_s) and was killed"
                                              : "timed out after %.0f s (bench.trial_timeout_s) and was killed",
                  limit);
    what = buf;
  } else {
    what = e.result.describe();
  }
  return e.shown + " " + what + stderr_tail(e);
}

}  // namespace perfwatch::adapters
