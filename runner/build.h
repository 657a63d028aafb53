// Building one checkout with the manifest's build command.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/manifest.h"
#include "runner/process.h"

namespace perfwatch::runner {

struct BuildOutcome {
  ProcessResult process;            // ok() when the build succeeded
  std::string command;
  std::filesystem::path log_path;   // the whole log
  std::string toolchain;            // first lines of the compilers' --version, for provenance
  bool ok() const { return process.ok(); }
};

// Runs manifest.build.command with /bin/sh -c in <checkout>/<build.workdir>,
// within build.timeout_s, writing the whole log to log_path. An empty command
// (a version 2 manifest without `build`) is nothing to build: ok at once.
// `watch` passes a stop request on and records the build's process group.
// `launcher` builds elsewhere (launcher.h: a Slurm job on the testbed's
// partition, so the build sees that node's toolchain and GPU architecture).
BuildOutcome run_build(const Manifest& manifest, const std::filesystem::path& checkout, const std::filesystem::path& log_path,
                       ChildWatch watch = {}, const std::vector<std::string>& launcher = {});

// "g++ (Debian 12.2.0-14) 12.2.0; cmake version 3.25.1; nvcc: Cuda compilation tools, release 13.0, V13.0.88"
std::string probe_toolchain();

}  // namespace perfwatch::runner
