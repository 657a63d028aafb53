// The command adapter (bench.adapter = "command"): watches a program that
// knows nothing of perfwatch -- an end-to-end throughput script -- unchanged.
//
// Each execution runs bench.command (with /bin/sh -c when it has shell
// syntax) in the current directory, with the point's axes and the variant's
// params substituted ("--conc {batch}", see placeholders.h) and bench.env
// set ("TARGET_CTAS": "{target_ctas}"). Each metric of bench.extract is read
// from what the execution wrote on stdout: by `regex` (ECMAScript, exactly
// one capture group around the number; the last matching line wins; lines
// longer than 4096 bytes are not searched) or by `json_pointer` (into the
// last stdout line that is a JSON object, the value a JSON number), then
// multiplied by `scale`.
//
// The first execution of a variant at a point is its check (and warm-up, not
// a trial): ok when it exits 0 and every rule reads a value > 0. After it,
// one execution per trial asked for.
//
// What goes wrong, and what it becomes:
//   - the program does not exist (not on PATH / no such file, found before
//     the header; exit 127 or 126 from the shell later): an error line naming
//     bench.command, the run ends (exit 1);
//   - a rule matches nothing, captures a non-number, or the JSON value is
//     missing or not a number (after exit 0): an error line naming the rule
//     (bench.extract.<metric>.regex) and quoting the output line it read (or
//     the last one), the run ends;
//   - the program exits non-zero, is killed, or runs past
//     bench.trial_timeout_s, or a value is <= 0: at the check, that cell is
//     `incorrect` with the exit code and the stderr tail and the run goes on;
//     after a passing check, that request is answered with a `skipped` line
//     (see Cell::fail).
#pragma once

#include <memory>
#include <ostream>

#include "adapters/session.h"
#include "adapters/settings.h"

namespace perfwatch::adapters {

// `log` receives one line per execution (the run's stderr log).
std::unique_ptr<Bench> make_command_bench(BenchSettings settings, std::ostream& log);

}  // namespace perfwatch::adapters
