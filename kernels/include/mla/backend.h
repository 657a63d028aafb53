// A backend runs the split-KV decode of problem.h on one kind of processor.
// The bench program (bench/) drives any backend through this interface:
// describe the variants, prepare a point's inputs, check a variant against
// the float64 reference, then time trials.
//
// Errors (a CUDA call that fails, an allocation that does not fit) are thrown
// as mla::Error; the bench turns them into protocol lines.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mla/inputs.h"
#include "mla/problem.h"

namespace mla {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the header line reports about the processor.
struct DeviceInfo {
  std::string backend;          // "cpu" or "cuda"
  std::string name;             // "NVIDIA H200", or the CPU model
  std::string uuid;             // "GPU-xxxxxxxx-xxxx-...", where the device has one; empty otherwise
  int multiprocessors = 0;      // SMs, or worker threads on the CPU
  int cc_major = 0, cc_minor = 0;
  long long l2_bytes = 0;       // last-level cache on the CPU
  long long smem_per_block_optin = 0;
  long long global_mem_bytes = 0;
  int sm_clock_khz = 0;         // the default (base) SM clock the driver reports
  int mem_clock_khz = 0;
  int mem_bus_width_bits = 0;
  int driver_version = 0;       // CUDA's integer form, 13000 = 13.0
  int runtime_version = 0;
  std::vector<std::pair<std::string, std::string>> extra;  // anything else worth keeping
};

// Resources of one compiled kernel, from the compiler's and the occupancy API's view.
struct KernelResources {
  std::string kernel;                 // e.g. "split_kv<bt32,w4,s2,bh16>" or "combine"
  std::string dtype;                  // the KV cache dtype it reads ("bf16", "fp8"); empty for dtype-free kernels
  int block_h = 0;
  int threads_per_block = 0;
  int registers_per_thread = 0;
  int static_smem_bytes = 0;
  int dynamic_smem_bytes = 0;
  int local_bytes_per_thread = 0;     // spills
  int max_blocks_per_sm = 0;          // 0 = does not fit
  // Whether its shared memory fits the users' sm_120 cards (99 KB a block);
  // unset where the question does not arise (the CPU, the combine kernel).
  std::optional<bool> fits_sm120;
};

struct VariantReport {
  bool feasible = true;
  std::string reason;                        // why not, when !feasible
  std::vector<KernelResources> kernels;
  std::vector<std::string> ignored_params;   // knobs this backend has no use for (CPU: num_warps...)
};

// How one variant runs one point.
struct LaunchReport {
  bool feasible = true;
  std::string reason;
  SplitPlan split;
  int target_ctas = 0;                // after resolving 0 to the device default
  int threads_per_block = 0;
  int smem_bytes = 0;
  int blocks_per_sm = 0;
};

struct WorkloadSpec {
  std::uint64_t seed = 1;
  int context_rows = 0;               // 0 = max(4 * topk, 4096)
  int sets = 0;                       // 0 = enough that the timed working set is >= 2x the last-level cache
  double check_masked_fraction = 0.1;
  float softmax_scale = static_cast<float>(kDefaultSoftmaxScale);
};

// Inputs of one point, resident where the backend computes.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual const Point& point() const = 0;
  virtual const CacheLayout& layout() const = 0;
  // Host copy of the check set, for the reference.
  virtual const HostInputs& check_inputs() const = 0;
  // Bytes the timed steps touch over one rotation through the input sets.
  virtual double working_set_bytes() const = 0;
};

struct CheckOutputs {
  std::vector<std::uint16_t> o;  // [B, H, 512] bf16 bits
  std::vector<float> lse;        // [B, H]
};

struct TrialTiming {
  double elapsed_us = 0;                  // wall time of the timed batch
  int steps = 0;                          // decode steps in it (one input set each, rotating)
  double time_us() const { return elapsed_us / steps; }
  std::optional<double> sm_clock_mhz;     // measured during the batch (GPU)
  std::optional<double> default_clock_mhz;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo device() const = 0;
  virtual VariantReport describe(const VariantParams& variant) const = 0;
  virtual LaunchReport plan_launch(const VariantParams& variant, const Point& point) const = 0;
  virtual std::unique_ptr<Workload> prepare(const Point& point, const WorkloadSpec& spec) = 0;
  // Poisons the outputs, runs one step on the check set, and returns what it wrote.
  virtual CheckOutputs run_check(const VariantParams& variant, Workload& workload) = 0;
  // One trial: a warmed-up, timed batch of steps lasting at least min_trial_ms,
  // rotating through the input sets.
  virtual TrialTiming time_trial(const VariantParams& variant, Workload& workload, double min_trial_ms) = 0;
};

// threads = 0: one per hardware thread.
std::unique_ptr<Backend> make_cpu_backend(int threads);

// Only in builds with CUDA (MLA_HAVE_CUDA). Returns nullptr, with the reason in
// *why, when there is no usable device.
std::unique_ptr<Backend> make_cuda_backend(int device, std::string* why);

}  // namespace mla
