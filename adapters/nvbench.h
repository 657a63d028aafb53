// The nvbench adapter (bench.adapter = "nvbench"): watches an NVBench binary.
// Written against NVBench's own source (NVIDIA/nvbench: docs/cli_help.md,
// docs/cli_help_axis.md, nvbench/option_parser.cu, nvbench/json_printer.cu,
// nvbench/summary.cuh, nvbench/detail/measure_cold.cu); JSON file version 1.
//
// bench.command is the binary and any fixed arguments, split at spaces (no
// shell). Before the header the adapter asks the binary for its devices
// (--jsonlist-devices) and benchmarks with their axes (--jsonlist-benches;
// both came with NVBench in April 2023) and checks the manifest against them:
// the benchmark (bench.nvbench.benchmark; may be left out when the binary has
// one), each sweep axis (named the same in NVBench, or mapped by
// bench.nvbench.axes: manifest name -> NVBench name), and that every NVBench
// axis with more than one value is set by the sweep or by each variant's
// params -- otherwise one execution would measure several configurations.
// A variant param that names an NVBench axis (directly or mapped) is passed
// as one; other params are reported as ignored in the variant line.
//
// One execution per trial:
//   <binary> <fixed args> -b <benchmark> --devices 0 -a <Axis>=<value> ...
//            <bench.nvbench.args> --json <temporary file>
// (choose the GPU with CUDA_VISIBLE_DEVICES in bench.env). A trial is one
// NVBench measurement: its summaries, each metric from the summary tag
// bench.nvbench.fields names (default: the judged metric from
// nv/cold/time/gpu/mean, the mean isolated GPU time by CUDA events, only
// when lower is better); a summary with hint "duration" (seconds) is
// converted to microseconds, any other is taken as it is. steps =
// nv/cold/sample_size; clock_mhz = nv/cold/sm_clock_rate/mean.
//
// The check of a variant at a point is its first execution (also its first
// trial): ok when NVBench measured it; infeasible when the state is skipped
// (is_skipped, with skip_reason); incorrect when the binary exits non-zero,
// is killed or runs past bench.trial_timeout_s. A summary the state lacks or
// a value that is not a number is an error naming bench.nvbench.fields.<metric>.
// The header's device is the first device --jsonlist-devices lists.
#pragma once

#include <memory>
#include <ostream>

#include "adapters/session.h"
#include "adapters/settings.h"

namespace perfwatch::adapters {

std::unique_ptr<Bench> make_nvbench_bench(BenchSettings settings, std::ostream& log);

}  // namespace perfwatch::adapters
