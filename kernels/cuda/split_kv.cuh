// The split-KV sparse MLA decode kernel: one CTA per (batch element, head
// group, split). It walks its tiles of BlockT gathered KV rows with a
// NumStages-deep pipeline (one bulk copy a row completing on a stage's
// mbarrier, or 16-byte cp.async pieces: cuda_tuning.h's kBulkGather),
// computes S = Q.K^T and O += P.V on the tensor cores (mma.sync m16n8k16
// bf16 -> fp32, operands through ldmatrix: sm_80 instructions; the bulk copy
// and griddepcontrol are sm_90, so the same code runs on sm_90 and sm_120),
// and keeps the softmax online in fp32. Launched as a programmatic dependent
// of the kernel before it (cuda_tuning.h's kSplitPdl).
//
// Work split inside the CTA (NumWarps warps, head tile of BlockH rows):
//  - warp w owns latent columns [w*512/W, (w+1)*512/W): the matching k-steps
//    of Q.K^T and the same output columns of P.V, so its q fragments stay in
//    registers and each KV element is read by exactly one warp per product;
//    the four 16-wide k-steps of the rope part go to warps 0..3;
//  - the warps' partial scores meet in shared memory; each warp then owns
//    BlockH/W rows of the softmax (running max m, sum l), writes the tile's
//    probabilities as bf16 and each row's rescale factor alpha;
//  - every warp rescales its accumulator by alpha and adds P.V for its columns.
// Four barriers a tile with cp.async; with the bulk gather 2 (16-token
// tiles) or 3 (see the tile loop). With an fp8 cache the products read the landed
// 656-byte rows themselves: each lane converts its fragments' e4m3 bytes
// exactly to fp16 and the MMAs run in fp16 (q's latent part converted once,
// in place); the per-128 scales go on the partial scores (fp32) and on the P
// fragments of each warp's block (fp16) (split_kv_phases.cuh).
//
// The phases are device functions of split_kv_phases.cuh; this file composes
// them. Included only by the per-variant translation units (variant.cu.in).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda_tuning.h"
#include "kernel_table.h"
#include "launch_plan.h"
#include "mla/problem.h"
#include "split_kv_phases.cuh"

namespace mla::cuda {

template <int BlockT, int NumWarps, int NumStages, int BlockH, KvDtype Dtype>
__global__ void __launch_bounds__(32 * NumWarps,
                                  (SplitConfig<BlockT, NumWarps, NumStages, BlockH, Dtype>::kMinBlocks))
    split_kv_kernel(const SplitArgs a) {
  using C = SplitConfig<BlockT, NumWarps, NumStages, BlockH, Dtype>;
  using namespace phase;
  constexpr int RS = C::kRowStride;

  extern __shared__ __align__(128) unsigned char smem[];
  std::uint16_t* const land_s = reinterpret_cast<std::uint16_t*>(smem + C::kOffKv);
  std::uint16_t* const kv_s = reinterpret_cast<std::uint16_t*>(smem + C::kOffTile);
  int* const idx_s = reinterpret_cast<int*>(smem + C::kOffIdx);
  std::uint16_t* const q_s = reinterpret_cast<std::uint16_t*>(smem + C::kOffQ);
  float* const sc_s = reinterpret_cast<float*>(smem + C::kOffScores);
  std::uint16_t* const p_s = reinterpret_cast<std::uint16_t*>(smem + C::kOffProbs);
  float* const alpha_s = reinterpret_cast<float*>(smem + C::kOffStats);
  float* const l_s = alpha_s + BlockH;
  float* const m_s = l_s + BlockH;

  const int tid = static_cast<int>(threadIdx.x);
  Lanes<C> lanes(tid);
  const Work work = cta_work(a);

  // The bulk gather's stage barriers (static, 8 bytes a stage; unused and
  // dropped otherwise).
  __shared__ __align__(8) std::uint64_t stage_bars[NumStages];
  init_stage_barriers<C>(stage_bars, tid);
  // Launched as a programmatic dependent (cuda_tuning.h's kSplitPdl): what
  // the kernel before wrote (and read: the partials) is settled after this.
  if constexpr (tuning::kSplitPdl) asm volatile("griddepcontrol.wait;\n" ::: "memory");

  load_q<C>(a, work, q_s, tid);
  const int load_row = tid / 8, load_col = tid % 8;
  const std::int32_t* const ind = a.indices + static_cast<long long>(work.b) * a.topk;
  int next_idx[C::kLoadRowsPerThread];
  gather_prologue<C>(next_idx, a, ind, work.range, land_s, idx_s, stage_bars, load_row, load_col);

  // q fragments: loaded once when they stay in registers.
  cp_async_wait<NumStages - 1>();
  __syncthreads();
  float qscale = 1.f;  // fp8: 2^e, q's latent part is held times 2^-e
  if constexpr (C::kFp8) qscale = q_latent_to_f16<C>(q_s, reinterpret_cast<unsigned*>(m_s), tid);
  QFragments<C> qf;
  lanes.set_fragments();
  load_q_fragments<C>(qf, q_s, lanes);

  OAccumulator<C> o_acc;
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
    for (int n = 0; n < C::kOTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o_acc[mt][n][e] = 0.f;
  lanes.set_softmax_row();
  float l_run = 0.f, m_run = device::kNegInf;  // running sum and max of this lane's softmax row
  int e_cur = 127;  // fp8: the accumulator holds O times 2^(127 - e_cur) (tile_pv_fp8)

  // Barriers a tile (C::kTileBarriers): 4 as written below; with the bulk
  // gather and 2+ stages, 3 (no barrier after the wait: each thread's
  // mbarrier wait shows it the landed rows, and the indices and a masked
  // row's zeros were stored before an earlier barrier) or 2 (also none at
  // the top: the stage of tile - 1 is refilled after this tile's first
  // barrier, which every warp reaches only after its P.V of tile - 1, so
  // NumStages - 1 tiles are in flight during the wait instead of NumStages).
  constexpr bool kLateRefill = C::kTileBarriers == 2;
  // (The partial scores overwrite q's staging area: every warp must hold
  // its q fragments first; the top barrier did that when there was one.)
  if constexpr (kLateRefill) __syncthreads();
  for (int tile = work.range.first; tile < work.range.last; ++tile) {
    // Refill the stage of tile - 1 before waiting for this tile, so that
    // NumStages tiles are in flight while this one lands (the first barrier
    // frees that stage; the second publishes every thread's copies).
    if constexpr (!kLateRefill) {
      __syncthreads();
      issue_tile<C>(next_idx, a, work.range, land_s, idx_s, stage_bars, load_row, load_col, tile + NumStages - 1);
      if constexpr (!C::kBulkGather) cp_async_commit();
      fetch_indices<C>(next_idx, a, ind, work.range, load_row, tile + NumStages);
    }
    wait_tile<C>(stage_bars, work.range, tile);
    if constexpr (C::kTileBarriers == 4) __syncthreads();
    const int stage = tile % NumStages;
    if constexpr (C::kFp8) {
      const unsigned char* const land = reinterpret_cast<const unsigned char*>(land_s) + stage * C::kStageBytes;
      TileScales<C> ts;
      load_tile_scales<C>(ts, land, lanes);
      tile_scores_fp8<C>(land, qf, q_s, sc_s, lanes, ts, qscale);
      __syncthreads();
      if constexpr (kLateRefill) {
        issue_tile<C>(next_idx, a, work.range, land_s, idx_s, stage_bars, load_row, load_col, tile + NumStages - 1);
        fetch_indices<C>(next_idx, a, ind, work.range, load_row, tile + NumStages);
      }
      tile_softmax<C>(sc_s, idx_s + stage * BlockT, a.scale_log2, p_s, alpha_s, lanes, m_run, l_run);
      __syncthreads();
      tile_pv_fp8<C>(o_acc, land, p_s, alpha_s, lanes, ts, e_cur);
    } else {
      const std::uint16_t* const kvt = kv_s + stage * BlockT * RS;
      tile_scores<C>(kvt, qf, q_s, sc_s, lanes);
      __syncthreads();
      if constexpr (kLateRefill) {
        issue_tile<C>(next_idx, a, work.range, land_s, idx_s, stage_bars, load_row, load_col, tile + NumStages - 1);
        fetch_indices<C>(next_idx, a, ind, work.range, load_row, tile + NumStages);
      }
      tile_softmax<C>(sc_s, idx_s + stage * BlockT, a.scale_log2, p_s, alpha_s, lanes, m_run, l_run);
      __syncthreads();
      tile_pv<C>(o_acc, kvt, p_s, alpha_s, lanes);
    }
  }

  // The combine kernel (launched as a programmatic dependent) may start now;
  // it waits for this grid's completion before reading the partials.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  write_outputs<C>(a, work, o_acc, l_s, m_s, lanes, m_run, l_run, e_cur);
}

template <int BlockT, int NumWarps, int NumStages, KvDtype Dtype>
struct SplitKernels {
  static const void* kernel(int block_h) {
    return block_h == 16 ? reinterpret_cast<const void*>(&split_kv_kernel<BlockT, NumWarps, NumStages, 16, Dtype>)
                         : reinterpret_cast<const void*>(&split_kv_kernel<BlockT, NumWarps, NumStages, 32, Dtype>);
  }
  static void launch(int block_h, const SplitArgs& args, unsigned grid, int smem_bytes, cudaStream_t stream) {
    if constexpr (tuning::kSplitPdl) {
      // (An error of the launch is left for the caller's cudaGetLastError.)
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attr[0].val.programmaticStreamSerializationAllowed = 1;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(grid);
      config.blockDim = dim3(32 * NumWarps);
      config.dynamicSmemBytes = static_cast<std::size_t>(smem_bytes);
      config.stream = stream;
      config.attrs = attr;
      config.numAttrs = 1;
      if (block_h == 16)
        (void)cudaLaunchKernelEx(&config, split_kv_kernel<BlockT, NumWarps, NumStages, 16, Dtype>, args);
      else
        (void)cudaLaunchKernelEx(&config, split_kv_kernel<BlockT, NumWarps, NumStages, 32, Dtype>, args);
      return;
    }
    if (block_h == 16)
      split_kv_kernel<BlockT, NumWarps, NumStages, 16, Dtype><<<grid, 32 * NumWarps, smem_bytes, stream>>>(args);
    else
      split_kv_kernel<BlockT, NumWarps, NumStages, 32, Dtype><<<grid, 32 * NumWarps, smem_bytes, stream>>>(args);
  }
};

}  // namespace mla::cuda
