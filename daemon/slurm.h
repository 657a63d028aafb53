// The slurm executor's slot: builds and benches as Slurm jobs started with
// srun, which passes the plan on stdin and the bench's lines on stdout back
// as they come (the protocol cannot tell), on the testbed's partition with
// its --gres. Slurm sets CUDA_VISIBLE_DEVICES in the job. The worktrees and
// build folders live in the daemon's state dir, which must be on a file
// system the nodes share: srun starts the job in the same directory.
//
// After a job that did not end ok, Slurm's own record of it (`scontrol show
// job`, found by the job's unique name) says whether the job was lost --
// cancelled, preempted, past its time limit, or its node failed -- and why.
// A lost job is no verdict on the commit: the run is stored as `lost` with
// Slurm's reason and run again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "daemon/executor.h"

namespace perfwatch::daemon {

struct SlurmTestbedConfig {
  std::string name;       // the testbed's name in perfwatch ("hopper")
  std::string partition;
  std::string gres = "gpu:1";
  std::string time_limit;             // empty: the partition's default
  std::vector<std::string> srun_args;
};

class SlurmSlot final : public Slot {
 public:
  SlurmSlot(SlurmTestbedConfig config, int index) : config_(std::move(config)), index_(index) {}
  std::string label() const override;
  Placement place(const std::string& name, bool build) const override;
  Ending ended(const std::string& name) const override;

 private:
  SlurmTestbedConfig config_;
  int index_;
};

// One job of `scontrol -o show job` output, by its fields.
struct SlurmJob {
  long long id = 0;
  std::string name, state, reason, node, exit_code;
};
// The newest job named `name` in that output, if any.
std::optional<SlurmJob> find_slurm_job(const std::string& scontrol_output, const std::string& name);
// Why a job in that state was lost ("CANCELLED", "PREEMPTED", "NODE_FAIL",
// "TIMEOUT", "BOOT_FAIL", "DEADLINE"), or nullopt for a job that ran to its
// own end (COMPLETED, FAILED, OUT_OF_MEMORY: the bench's doing).
std::optional<std::string> lost_reason(const SlurmJob& job);

// Checks that srun and scontrol answer and the partition exists (errors say
// what Slurm said).
Status check_slurm_partition(const std::string& partition, const std::string& where);

}  // namespace perfwatch::daemon
