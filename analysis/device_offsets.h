// Is one GPU of a testbed consistently off (a slow card, a throttled one)?
// Runs of one build spread over several GPUs: each run's offset is how far
// its values sit from the mean of all runs, on the log scale, averaged over
// the cells it measured (the cells of one run share its process and its
// GPU, so the run, not the cell, is the unit). A GPU whose runs' offsets
// differ from the other GPUs' by a Welch t-test at alpha / GPUs (each GPU is
// one test) and by more than the run-to-run spread on one GPU is off: it is
// reported, and its runs are kept out of the pooled band. It takes three
// GPUs to say which one is off: of two that differ, either may be.
#pragma once

#include <string>
#include <vector>

namespace perfwatch::analysis {

struct DeviceRun {
  std::string device;          // the GPU's UUID
  std::vector<double> values;  // by cell, aligned across runs; NaN or <= 0 where the run has none
};

struct DeviceOffset {
  std::string device;
  int runs = 0;
  double offset_rel = 0;  // its runs against the others': +0.031 = 3.1% higher values
  double p_value = 1;     // Welch's t on the run offsets (1 when either side has fewer than 2 runs)
  bool off = false;       // 3+ GPUs, significant at alpha / devices and larger than the run-to-run spread
};

// One entry per device, in the order they first appear; empty with fewer
// than two devices.
std::vector<DeviceOffset> device_offsets(const std::vector<DeviceRun>& runs, double alpha = 0.01);

}  // namespace perfwatch::analysis
