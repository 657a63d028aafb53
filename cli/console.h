// What the commands print while they work: stages as lines, sweep progress
// as one line rewritten in place on a terminal, or a line at each new point
// (and every 10 s within one) when stderr is a file or a pipe.
#pragma once

#include <chrono>
#include <string>

#include "daemon/bench_commit.h"

namespace perfwatch::cli {

class ConsoleReporter : public daemon::BenchReporter {
 public:
  ConsoleReporter();
  ~ConsoleReporter() override;
  void stage(const std::string& what) override;
  void progress(const runner::SweepProgress& p) override;

 private:
  void end_live_line();
  bool tty_;
  bool live_ = false;
  int last_point_ = -1;
  std::chrono::steady_clock::time_point last_print_{};
};

}  // namespace perfwatch::cli
