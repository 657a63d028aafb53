// A/A calibration of the noise band (`perfwatch noise`, or a noise job of
// the queue): one build of one commit run K times in separate bench
// processes (RunKind noise). For each variant x point the K run medians are
// one group of one build (K - 1 degrees of freedom of run-to-run noise); each
// non-baseline variant's K per-run ratios to the baseline are one group for
// its paired (A/B) band. The bands are then recomputed from all the evidence
// (bands.h) and stored with how they were computed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/device_offsets.h"
#include "common/result.h"
#include "daemon/commit_job.h"
#include "daemon/context.h"
#include "store/records.h"

namespace perfwatch::daemon {

struct NoiseResult {
  std::string sha;
  std::optional<store::TestbedId> testbed;
  std::vector<store::RunId> runs;  // every run made, ok or not
  int ok_runs = 0;
  std::string failure;             // why it stopped early, if it did
  std::vector<store::NoiseBandRecord> bands;  // the bands now, per variant x point measured
  // Runs spread over several GPUs (local-gpus): each GPU against the others;
  // one that is `off` was left out of the bands. Empty on one GPU.
  std::vector<analysis::DeviceOffset> devices;
  double bench_s = 0;
};

// K A/A runs of `rev`, in the build slot named "noise" (so a daemon working
// in the shared slots is not in the way), then the evidence and the bands.
// The first run builds; the others spread over the context's testbed slots
// (every GPU of the model, with local-gpus), so the band says what a run on
// any of them varies by.
Result<NoiseResult> calibrate_noise(Context& ctx, const std::string& rev, int runs,
                                    std::optional<store::JobId> job = std::nullopt);

// A noise job of the queue (options {"runs": K}, default 10).
Result<JobResult> run_noise_job(Context& ctx, const store::JobRecord& job);

}  // namespace perfwatch::daemon
