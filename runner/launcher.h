// Starting a build or a bench somewhere else than here: a launcher is a
// command prefix that runs the rest of its arguments elsewhere and passes
// stdin, stdout, stderr and the exit status through (`srun --partition=hopper
// --gres=gpu:1 --`). The bench protocol cannot tell: it still reads a plan
// on stdin and writes lines on stdout.
#pragma once

#include <string>
#include <vector>

#include "runner/process.h"

namespace perfwatch::runner {

// `spec` run through `launcher` (unchanged when it is empty): a shell command
// becomes `launcher... /bin/sh -c <command>`, an argv `launcher... argv...`.
// The working directory and environment are the launcher's, which passes
// them on (srun starts the task in the same directory, with the same
// environment, so both must be on a file system the node shares).
ProcessSpec through(const std::vector<std::string>& launcher, ProcessSpec spec);

}  // namespace perfwatch::runner
