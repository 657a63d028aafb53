#include "launch_plan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mla::cuda {
namespace {

template <std::size_t N>
bool contains(const int (&values)[N], int v) {
  return std::find(std::begin(values), std::end(values), v) != std::end(values);
}

}  // namespace

bool is_compiled(const VariantParams& v) {
  return contains(kBlockTs, v.block_t) && contains(kNumWarps, v.num_warps) && contains(kNumStages, v.num_stages);
}

std::vector<KernelShape> compiled_shapes() {
  std::vector<KernelShape> out;
  for (int bt : kBlockTs)
    for (int w : kNumWarps)
      for (int s : kNumStages) out.push_back({bt, w, s, 16});
  return out;
}

DeviceLimits h200_limits() {
  // H100/H200 (sm_90): 228 KB a multiprocessor, 227 KB a block after opt-in,
  // 1 KB a block reserved by the system.
  return {232448, 233472, 1024, 132};
}

DeviceLimits sm120_limits() {
  // GeForce Blackwell (sm_120): 100 KB a multiprocessor, 99 KB a block.
  return {101376, 102400, 1024, 0};
}

Fit check_fit(const KernelShape& k, const DeviceLimits& d) {
  const SmemLayout s = smem_layout(k);
  if (s.total <= d.smem_per_block_optin) return {};
  return {false, "needs " + std::to_string(s.total) + " bytes of shared memory a block (" +
                     std::to_string(k.num_stages) + " stages of " + std::to_string(k.block_t) + " rows of " +
                     std::to_string(s.land_row_bytes) + " bytes" + ", plus q, scores and probabilities for " + std::to_string(k.block_h) +
                     " heads); the device allows " + std::to_string(d.smem_per_block_optin)};
}

bool fits_sm120(const KernelShape& k) { return check_fit(k, sm120_limits()).fits; }

int smem_blocks_per_sm(const KernelShape& k, const DeviceLimits& d) {
  if (!check_fit(k, d).fits) return 0;
  const long long per_block = smem_layout(k).total + d.smem_reserved_per_block;
  return static_cast<int>(d.smem_per_sm / per_block);
}

int resolve_target_ctas(int target_ctas, int multiprocessors) {
  return target_ctas > 0 ? target_ctas : 2 * multiprocessors;
}

LaunchShape launch_shape(const VariantParams& v, const Point& p, int multiprocessors) {
  if (!is_compiled(v))
    throw std::invalid_argument("launch_shape: variant (block_t " + std::to_string(v.block_t) + ", num_warps " +
                                std::to_string(v.num_warps) + ", num_stages " + std::to_string(v.num_stages) +
                                ") is not compiled");
  LaunchShape s;
  s.split = plan_split(p, v.block_t, resolve_target_ctas(v.target_ctas, multiprocessors));
  s.kernel = {v.block_t, v.num_warps, v.num_stages, kernel_block_h(s.split.block_h), p.dtype};
  s.split_grid = s.split.ctas;
  s.split_threads = 32 * v.num_warps;
  s.split_smem = smem_layout(s.kernel).total;
  s.combine = s.split.nsplit > 1;
  if (s.combine) {
    s.combine_grid = static_cast<long long>(p.batch) * p.heads;
    s.combine_threads = combine_groups(s.split.nsplit) * kCombineColumnThreads;
    s.partial_lse_floats = s.combine_grid * s.split.nsplit;
    s.partial_o_floats = s.partial_lse_floats * kDimV;
  }
  return s;
}

int input_sets_for(const Point& p, long long l2_bytes, int requested) {
  if (requested > 0) return requested;
  const double per_step = bytes_per_step(p);
  const double need = 2.0 * static_cast<double>(l2_bytes);
  return std::max(2, static_cast<int>(std::ceil(need / per_step)));
}

int steps_for(double step_us_estimate, double min_trial_ms, int sets, int max_steps) {
  const double wanted = std::ceil(min_trial_ms * 1000.0 / std::max(step_us_estimate, 1e-3));
  long long steps = static_cast<long long>(std::max(wanted, 1.0));
  steps = (steps + sets - 1) / sets * sets;
  const long long cap = std::max<long long>(sets, max_steps / sets * sets);
  return static_cast<int>(std::min(steps, cap));
}

std::string kernel_name(const KernelShape& k) {
  return std::string(k.dtype == KvDtype::kFp8E4m3 ? "split_kv_fp8" : "split_kv") + "<bt" + std::to_string(k.block_t) + ",w" + std::to_string(k.num_warps) + ",s" +
         std::to_string(k.num_stages) + ",bh" + std::to_string(k.block_h) + ">";
}

}  // namespace mla::cuda
