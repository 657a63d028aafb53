#include "cli/console.h"

#include <unistd.h>

#include <cstdio>

#include "common/text.h"

namespace perfwatch::cli {

ConsoleReporter::ConsoleReporter() : tty_(::isatty(STDERR_FILENO) == 1) {}
ConsoleReporter::~ConsoleReporter() { end_live_line(); }

void ConsoleReporter::end_live_line() {
  if (live_) std::fputc('\n', stderr);
  live_ = false;
}

void ConsoleReporter::stage(const std::string& what) {
  end_live_line();
  std::fprintf(stderr, "perfwatch: %s\n", terminal_safe(what).c_str());
}

void ConsoleReporter::progress(const runner::SweepProgress& p) {
  char line[256];
  std::snprintf(line, sizeof line, "point %d/%d %s  %s  trial %d  CI +-%.1f%%  (%.0f s)", p.point_index + 1, p.points,
                p.point.c_str(), p.variant.c_str(), p.trials, p.rel_ci * 100, p.elapsed_s);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K  %s", terminal_safe(line).c_str());
    live_ = true;
    return;
  }
  // In a log, a line per point and one every 10 s within a long one: the
  // variants' trials are interleaved (A B A B), so a line per change of
  // variant was a line per trial.
  auto now = std::chrono::steady_clock::now();
  if (p.point_index != last_point_ || now - last_print_ > std::chrono::seconds(10)) {
    std::fprintf(stderr, "  %s\n", terminal_safe(line).c_str());
    last_print_ = now;
    last_point_ = p.point_index;
  }
}

}  // namespace perfwatch::cli
