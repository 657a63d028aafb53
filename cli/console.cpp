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
  auto now = std::chrono::steady_clock::now();
  std::string cell = p.point + "/" + p.variant;
  if (cell != last_cell_ || now - last_print_ > std::chrono::seconds(5)) {
    std::fprintf(stderr, "  %s\n", terminal_safe(line).c_str());
    last_print_ = now;
    last_cell_ = cell;
  }
}

}  // namespace perfwatch::cli
