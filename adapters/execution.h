// One execution of a benchmarked program, and how the adapters' messages
// describe it. The process control is the runner's (runner/process.h): its
// own process group, a wall-clock limit that kills the whole group, stdout
// kept whole, the last 8 KiB of stderr kept.
#pragma once

#include <string>

#include "runner/process.h"

namespace perfwatch::adapters {

struct Execution {
  runner::ProcessResult result;
  std::string out;    // all it wrote on stdout
  std::string shown;  // the command line as messages show it: `./bench --conc 8`
  double limit_s = 0; // the spec's timeout_s
};

// Runs `spec` to completion (or its timeout_s). Never throws.
Execution execute(const runner::ProcessSpec& spec);

// What went wrong, for a reason or an error message, with the tail of its
// stderr: "`./bench --conc 8` exited with code 3; stderr ends: 'out of memory'".
// A timeout says the limit and names bench.trial_timeout_s, the field that sets it.
std::string failure(const Execution& e);

// "; stderr ends: '...'" or "" when it wrote nothing there.
std::string stderr_tail(const Execution& e);

}  // namespace perfwatch::adapters
