// Where builds and benches run: the executor the machine's config names
// (schemas/executor.schema.json), as testbeds with slots.
//
//   local       one testbed, one slot: this machine, today's behaviour.
//   local-gpus  one slot per GPU (CUDA_VISIBLE_DEVICES pins the bench to it);
//               the GPUs of one model are one testbed, so a commit's runs
//               spread over them in parallel and are judged together.
//   slurm       one testbed per config entry (a partition and its --gres),
//               `slots` jobs of a commit at once; builds and benches are
//               Slurm jobs (slurm.h), and every testbed measures every commit.
//
// A slot only says how to start a process; the daemon decides what runs
// (commit_job.h) and the store keeps where it ran (runs.placement_json).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace perfwatch::daemon {

// How to start one process in a slot.
struct Placement {
  std::vector<std::string> launcher;         // runner/launcher.h; empty: here
  std::map<std::string, std::string> env;    // on top of the bench's own
  nlohmann::json where = nlohmann::json::object();  // stored as the run's placement
  std::string device_uuid;                   // the GPU's, when the slot is one GPU
  // The store's testbed, when the executor decides it: a name template
  // ("{host}", "{backend}", "{device}" filled from the bench's header) and
  // the host to record. Empty: "{host}/{backend}/{device}" and this host.
  std::string testbed_name;
  std::string testbed_host;
};

// After a process ended not ok: whether the executor lost it (and why, in
// the executor's words) rather than the process failing by itself.
struct Ending {
  std::optional<std::string> lost;
  nlohmann::json where = nlohmann::json::object();  // what is known now (a Slurm job's id and node)
};

class Slot {
 public:
  virtual ~Slot() = default;
  virtual std::string label() const = 0;  // "gpu 3 (GPU-8f...)", "hopper/2"
  // `name` is unique per process ("perfwatch-run-41"); `build` is true for a build.
  virtual Placement place(const std::string& name, bool build) const = 0;
  virtual Ending ended(const std::string& name) const {
    (void)name;
    return {};
  }
};

// A testbed of the executor: the queue's name for it ("" for the only one of
// local and local-gpus with one GPU model, so a database keeps its jobs when
// the executor changes) and its slots.
struct ExecutorTestbed {
  std::string name;
  std::string description;  // "2 x NVIDIA H200 (gpus 0,1)", "slurm partition hopper, gres gpu:1, 4 slots"
  std::vector<std::shared_ptr<const Slot>> slots;
  int max_lost = 3;         // lost processes of one run re-submitted before the run fails
};

struct Executor {
  std::string kind = "local";  // local, local-gpus, slurm
  std::vector<ExecutorTestbed> testbeds;
};

// This machine, one slot.
Executor local_executor();

// Reads and checks an executor config file (errors name the file and the
// field) and sets it up: lists the GPUs for local-gpus (an error when there
// is none, or a listed index is not there), checks srun and the partitions
// for slurm. `host` names this machine in testbed names.
Result<Executor> load_executor(const std::filesystem::path& file, const std::string& host);

// The same from a parsed document; `where` names it in errors.
Result<Executor> make_executor(const nlohmann::json& config, const std::string& where, const std::string& host);

// One GPU as `nvidia-smi --query-gpu=index,uuid,name --format=csv,noheader` lists it.
struct Gpu {
  int index = 0;
  std::string uuid;
  std::string name;
};
// Parses that listing; errors name the line.
Result<std::vector<Gpu>> parse_gpu_list(const std::string& text);

}  // namespace perfwatch::daemon
