// The split-KV sparse MLA decode kernel: one CTA per (batch element, head
// group, split). It walks its tiles of BlockT gathered KV rows with a
// NumStages-deep cp.async pipeline, computes S = Q.K^T and O += P.V on the
// tensor cores (mma.sync m16n8k16 bf16 -> fp32, operands through ldmatrix:
// sm_80 instructions, so the same code runs on sm_90 and sm_120), and keeps
// the softmax online in fp32.
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
// Four barriers a tile.
//
// Included only by the per-variant translation units (variant.cu.in).
#pragma once

#include <cstdint>

#include "kernel_table.h"
#include "launch_plan.h"
#include "mla/problem.h"

namespace mla::cuda {
namespace device {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared; src_bytes = 0 writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a . b, m16n8k16, bf16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Round-to-nearest-even pair of floats -> packed bf16x2 (lo in the low half).
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ std::uint16_t to_bf16(float x) {
  return static_cast<std::uint16_t>(pack_bf16x2(x, 0.f) & 0xFFFFu);
}

inline constexpr float kNegInf = -__builtin_huge_valf();

}  // namespace device

template <int BlockT, int NumWarps, int NumStages, int BlockH>
struct SplitConfig {
  static constexpr int kThreads = 32 * NumWarps;
  static constexpr int kLatentPerWarp = kDimLatent / NumWarps;      // output and k columns of a warp
  static constexpr int kLatentKSteps = kLatentPerWarp / 16;
  static constexpr int kRopeKSteps = kDimRope / 16;                 // 4, one each for warps 0..3
  static constexpr int kMTiles = BlockH / 16;
  static constexpr int kChunks = BlockT / 16;                      // 16-token k-steps of P.V
  static constexpr int kOTiles = kLatentPerWarp / 8;                // n-tiles of the accumulator
  static constexpr bool kQInRegs = q_in_registers(BlockH, NumWarps);
  // Byte offsets of the shared-memory regions (launch_plan.h sizes them).
  static constexpr SmemLayout kLayout = smem_layout(BlockT, NumWarps, NumStages, BlockH);
  static constexpr int kOffKv = kLayout.kv, kOffIdx = kLayout.idx, kOffQ = kLayout.q;
  static constexpr int kOffScores = kLayout.scores, kOffProbs = kLayout.probs, kOffStats = kLayout.stats;
  static constexpr int kRowStride = kLayout.kv_row_stride;        // elements
  static constexpr int kScoreStride = BlockT + 8;                   // floats (scores), elements (probs)
  static constexpr int kChunksPerRow = kDimQK * 2 / 16;             // 72 16-byte pieces a KV row
  static constexpr int kLoadRowsPerPass = kThreads / 8;             // 8 threads a row, 128 contiguous bytes
  static constexpr int kLoadRowsPerThread = (BlockT + kLoadRowsPerPass - 1) / kLoadRowsPerPass;
  static constexpr int kSoftmaxRowsPerWarp = BlockH / NumWarps;
  static constexpr int kLanesPerRow = 32 / kSoftmaxRowsPerWarp;
  static constexpr int kColsPerLane = BlockT / kLanesPerRow;
  // Register cap for the CTAs a multiprocessor should hold (H200 shared
  // memory allows them): bt16 x 4 warps three, 8 warps at bt16/bt32 two, 16-row
  // tiles only (without it a few more registers cost a CTA an SM).
  static constexpr int kMinBlocks = BlockH != 16 ? 1 : NumWarps == 8 ? (BlockT <= 32 ? 2 : 1) : (BlockT == 16 ? 3 : 1);

  static_assert(kDimLatent % (16 * NumWarps) == 0, "latent columns must split into 16-wide k-steps");
  static_assert(NumWarps >= kRopeKSteps, "the rope k-steps go one to a warp");
  static_assert(BlockH % NumWarps == 0 && 32 % kSoftmaxRowsPerWarp == 0, "softmax rows must split evenly");
  static_assert(BlockT % kLanesPerRow == 0, "softmax columns must split evenly");
  static_assert(kOTiles % 2 == 0, "P.V loads two n-tiles per ldmatrix");
};

template <int BlockT, int NumWarps, int NumStages, int BlockH>
__global__ void __launch_bounds__(32 * NumWarps, (SplitConfig<BlockT, NumWarps, NumStages, BlockH>::kMinBlocks))
    split_kv_kernel(const SplitArgs a) {
  using C = SplitConfig<BlockT, NumWarps, NumStages, BlockH>;
  using namespace device;
  constexpr int RS = C::kRowStride;
  constexpr int SS = C::kScoreStride;

  extern __shared__ __align__(128) unsigned char smem[];
  std::uint16_t* const kv_s = reinterpret_cast<std::uint16_t*>(smem + C::kOffKv);
  int* const idx_s = reinterpret_cast<int*>(smem + C::kOffIdx);
  std::uint16_t* const q_s = reinterpret_cast<std::uint16_t*>(smem + C::kOffQ);
  float* const sc_s = reinterpret_cast<float*>(smem + C::kOffScores);
  std::uint16_t* const p_s = reinterpret_cast<std::uint16_t*>(smem + C::kOffProbs);
  float* const alpha_s = reinterpret_cast<float*>(smem + C::kOffStats);
  float* const l_s = alpha_s + BlockH;
  float* const m_s = l_s + BlockH;

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, q4 = lane % 4;  // mma fragment row group and column pair

  // Block order: batch element, then split, then head group, so the head
  // groups that share a tile's rows run side by side and meet in L2.
  const int hg = static_cast<int>(blockIdx.x % static_cast<unsigned>(a.head_groups));
  const unsigned rest = blockIdx.x / static_cast<unsigned>(a.head_groups);
  const int split = static_cast<int>(rest % static_cast<unsigned>(a.nsplit));
  const int b = static_cast<int>(rest / static_cast<unsigned>(a.nsplit));
  const TileRange range = tile_range(split, a.tiles, a.nsplit);
  const int h0 = hg * a.block_h;
  const int rows_valid = min(a.block_h, a.heads - h0);

  // ---- q rows of this head group; rows past the group are zero.
  {
    const std::uint16_t* qg = a.q + (static_cast<long long>(b) * a.heads + h0) * kDimQK;
    for (int c = tid; c < BlockH * C::kChunksPerRow; c += C::kThreads) {
      const int r = c / C::kChunksPerRow, k = c % C::kChunksPerRow;
      const bool ok = r < rows_valid;
      cp_async16(q_s + r * RS + k * 8, ok ? qg + r * kDimQK + k * 8 : a.q, ok ? 16 : 0);
    }
    cp_async_commit();
  }

  // ---- the gather: 8 threads a row, 72 pieces of 16 bytes; the row indices
  // of the next tile wait in registers one iteration ahead of their use.
  const int load_row = tid / 8, load_col = tid % 8;
  const std::int32_t* const ind = a.indices + static_cast<long long>(b) * a.topk;
  int next_idx[C::kLoadRowsPerThread];
  auto fetch_indices = [&](int tile) {
#pragma unroll
    for (int j = 0; j < C::kLoadRowsPerThread; ++j) {
      const int r = load_row + j * C::kLoadRowsPerPass;
      const int token = tile * BlockT + r;
      next_idx[j] = (r < BlockT && tile < range.last && token < a.topk) ? __ldg(ind + token) : -1;
    }
  };
  auto issue_tile = [&](int tile) {
    if (tile >= range.last) return;
    const int stage = tile % NumStages;
    std::uint16_t* const dst_stage = kv_s + stage * BlockT * RS;
#pragma unroll
    for (int j = 0; j < C::kLoadRowsPerThread; ++j) {
      const int r = load_row + j * C::kLoadRowsPerPass;
      if (r < BlockT) {
        const int idx = next_idx[j];
        if (load_col == 0) idx_s[stage * BlockT + r] = idx;
        const std::uint16_t* src = idx >= 0 ? a.kv + static_cast<long long>(idx) * kDimQK : a.kv;
        const int bytes = idx >= 0 ? 16 : 0;
        std::uint16_t* dst = dst_stage + r * RS;
#pragma unroll
        for (int k = load_col; k < C::kChunksPerRow; k += 8) cp_async16(dst + k * 8, src + k * 8, bytes);
      }
    }
  };

  // Prologue: the indices of the first NumStages - 1 tiles load together
  // (one memory latency, not one a tile), then their rows.
  {
    int pro_idx[NumStages > 1 ? NumStages - 1 : 1][C::kLoadRowsPerThread];
#pragma unroll
    for (int s = 0; s < NumStages - 1; ++s) {
      fetch_indices(range.first + s);
#pragma unroll
      for (int j = 0; j < C::kLoadRowsPerThread; ++j) pro_idx[s][j] = next_idx[j];
    }
#pragma unroll
    for (int s = 0; s < NumStages - 1; ++s) {
#pragma unroll
      for (int j = 0; j < C::kLoadRowsPerThread; ++j) next_idx[j] = pro_idx[s][j];
      issue_tile(range.first + s);
      cp_async_commit();
    }
    fetch_indices(range.first + NumStages - 1);
  }

  // ---- q fragments: loaded once when they stay in registers.
  cp_async_wait<NumStages - 1>();
  __syncthreads();
  std::uint32_t qf[C::kQInRegs ? C::kMTiles : 1][C::kQInRegs ? C::kLatentKSteps + 1 : 1][4];
  // ldmatrix lane -> (row, column) of an A operand (16x16, row-major).
  const int a_row = (lane / 8 % 2) * 8 + lane % 8, a_col = (lane / 16) * 8;
  // ... of a non-transposed B operand from [token][dim] rows (two n-tiles of tokens).
  const int bk_tok = (lane / 16) * 8 + lane % 8, bk_dim = (lane / 8 % 2) * 8;
  // ... of a transposed B operand from [token][dim] rows (two n-tiles of dims).
  const int bv_tok = (lane / 8 % 2) * 8 + lane % 8, bv_dim = (lane / 16) * 8;
  const int lat0 = warp * C::kLatentPerWarp;
  const bool has_rope = warp < C::kRopeKSteps;
  const int rope0 = kDimLatent + (warp % C::kRopeKSteps) * 16;
  auto k_dim = [&](int ks) { return ks < C::kLatentKSteps ? lat0 + ks * 16 : rope0; };
  if constexpr (C::kQInRegs) {
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
      for (int ks = 0; ks <= C::kLatentKSteps; ++ks)
        if (ks < C::kLatentKSteps || has_rope) ldmatrix_x4(qf[mt][ks], q_s + (mt * 16 + a_row) * RS + k_dim(ks) + a_col);
  }

  float o_acc[C::kMTiles][C::kOTiles][4];
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
    for (int n = 0; n < C::kOTiles; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o_acc[mt][n][e] = 0.f;

  // Softmax row this lane helps own, and its running state.
  const int sm_row = warp * C::kSoftmaxRowsPerWarp + lane / C::kLanesPerRow;
  const int sm_col = (lane % C::kLanesPerRow) * C::kColsPerLane;
  float m_run = kNegInf, l_run = 0.f;

  for (int tile = range.first; tile < range.last; ++tile) {
    // Refill the stage of tile - 1 before waiting for this tile, so that
    // NumStages tiles are in flight while this one lands (the first barrier
    // frees that stage; the second publishes every thread's copies).
    __syncthreads();
    issue_tile(tile + NumStages - 1);
    cp_async_commit();
    fetch_indices(tile + NumStages);
    cp_async_wait<NumStages - 1>();
    __syncthreads();
    const int stage = tile % NumStages;
    const std::uint16_t* const kvt = kv_s + stage * BlockT * RS;

    // ---- partial scores over this warp's k-steps, all chunks of the tile.
    // (Two accumulator sets for one-chunk tiles, to halve the MMA chain, cost
    // bt16_w4 ten registers and its third CTA an SM: slower, measured. So did
    // skipping the O rescale while alpha == 1: 14 registers.)
    {
      constexpr int kSets = 1;
      float s_acc[kSets][C::kChunks][C::kMTiles][2][4];
#pragma unroll
      for (int st = 0; st < kSets; ++st)
#pragma unroll
        for (int c = 0; c < C::kChunks; ++c)
#pragma unroll
          for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
            for (int e = 0; e < 4; ++e) s_acc[st][c][mt][0][e] = s_acc[st][c][mt][1][e] = 0.f;
#pragma unroll
      for (int ks = 0; ks <= C::kLatentKSteps; ++ks) {
        if (ks == C::kLatentKSteps && !has_rope) break;
        const int d0 = k_dim(ks);
        std::uint32_t qa[C::kMTiles][4];
#pragma unroll
        for (int mt = 0; mt < C::kMTiles; ++mt) {
          if constexpr (C::kQInRegs) {
#pragma unroll
            for (int e = 0; e < 4; ++e) qa[mt][e] = qf[mt][ks][e];
          } else {
            ldmatrix_x4(qa[mt], q_s + (mt * 16 + a_row) * RS + d0 + a_col);
          }
        }
#pragma unroll
        for (int c = 0; c < C::kChunks; ++c) {
          std::uint32_t kb[4];
          ldmatrix_x4(kb, kvt + (c * 16 + bk_tok) * RS + d0 + bk_dim);
#pragma unroll
          for (int mt = 0; mt < C::kMTiles; ++mt) {
            mma_bf16(s_acc[ks % kSets][c][mt][0], qa[mt], kb[0], kb[1]);
            mma_bf16(s_acc[ks % kSets][c][mt][1], qa[mt], kb[2], kb[3]);
          }
        }
      }
      float* const scw = sc_s + warp * BlockH * SS;
#pragma unroll
      for (int c = 0; c < C::kChunks; ++c)
#pragma unroll
        for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
          for (int n = 0; n < 2; ++n) {
            const int col = c * 16 + n * 8 + 2 * q4;
            *reinterpret_cast<float2*>(scw + (mt * 16 + g) * SS + col) =
                make_float2(s_acc[0][c][mt][n][0], s_acc[0][c][mt][n][1]);
            *reinterpret_cast<float2*>(scw + (mt * 16 + g + 8) * SS + col) =
                make_float2(s_acc[0][c][mt][n][2], s_acc[0][c][mt][n][3]);
          }
    }
    __syncthreads();

    // ---- softmax of this lane's part of its row.
    {
      constexpr int CPL = C::kColsPerLane;
      float x[CPL];
#pragma unroll
      for (int j = 0; j < CPL; ++j) x[j] = 0.f;
#pragma unroll
      for (int w = 0; w < NumWarps; ++w) {
        const float* src = sc_s + (w * BlockH + sm_row) * SS + sm_col;
        if constexpr (CPL % 4 == 0) {
#pragma unroll
          for (int j = 0; j < CPL; j += 4) {
            const float4 v = *reinterpret_cast<const float4*>(src + j);
            x[j] += v.x; x[j + 1] += v.y; x[j + 2] += v.z; x[j + 3] += v.w;
          }
        } else if constexpr (CPL % 2 == 0) {
#pragma unroll
          for (int j = 0; j < CPL; j += 2) {
            const float2 v = *reinterpret_cast<const float2*>(src + j);
            x[j] += v.x; x[j + 1] += v.y;
          }
        } else {
#pragma unroll
          for (int j = 0; j < CPL; ++j) x[j] += src[j];
        }
      }
      const int* const tidx = idx_s + stage * BlockT + sm_col;
      float tmax = kNegInf;
#pragma unroll
      for (int j = 0; j < CPL; ++j) {
        x[j] = tidx[j] >= 0 ? x[j] * a.scale_log2 : kNegInf;
        tmax = fmaxf(tmax, x[j]);
      }
#pragma unroll
      for (int off = C::kLanesPerRow / 2; off > 0; off /= 2) tmax = fmaxf(tmax, __shfl_xor_sync(0xffffffffu, tmax, off));
      const float m_new = fmaxf(m_run, tmax);
      const float m_use = m_new == kNegInf ? 0.f : m_new;  // an all-masked row so far: exp2(-inf) = 0
      const float alpha = fast_exp2(m_run - m_use);
      float tsum = 0.f;
#pragma unroll
      for (int j = 0; j < CPL; ++j) {
        x[j] = fast_exp2(x[j] - m_use);
        tsum += x[j];
      }
#pragma unroll
      for (int off = C::kLanesPerRow / 2; off > 0; off /= 2) tsum += __shfl_xor_sync(0xffffffffu, tsum, off);
      l_run = l_run * alpha + tsum;
      m_run = m_new;
      std::uint16_t* const pdst = p_s + sm_row * SS + sm_col;
      if constexpr (CPL % 2 == 0) {
#pragma unroll
        for (int j = 0; j < CPL; j += 2) *reinterpret_cast<std::uint32_t*>(pdst + j) = pack_bf16x2(x[j], x[j + 1]);
      } else {
#pragma unroll
        for (int j = 0; j < CPL; ++j) pdst[j] = to_bf16(x[j]);
      }
      if (lane % C::kLanesPerRow == 0) alpha_s[sm_row] = alpha;
    }
    __syncthreads();

    // ---- O = alpha * O + P . V over this warp's columns.
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt) {
      const float lo = alpha_s[mt * 16 + g], hi = alpha_s[mt * 16 + g + 8];
#pragma unroll
      for (int n = 0; n < C::kOTiles; ++n) {
        o_acc[mt][n][0] *= lo; o_acc[mt][n][1] *= lo;
        o_acc[mt][n][2] *= hi; o_acc[mt][n][3] *= hi;
      }
    }
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c) {
      std::uint32_t pa[C::kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < C::kMTiles; ++mt) ldmatrix_x4(pa[mt], p_s + (mt * 16 + a_row) * SS + c * 16 + a_col);
#pragma unroll
      for (int n2 = 0; n2 < C::kOTiles / 2; ++n2) {
        std::uint32_t vb[4];
        ldmatrix_x4_trans(vb, kvt + (c * 16 + bv_tok) * RS + lat0 + n2 * 16 + bv_dim);
#pragma unroll
        for (int mt = 0; mt < C::kMTiles; ++mt) {
          mma_bf16(o_acc[mt][2 * n2], pa[mt], vb[0], vb[1]);
          mma_bf16(o_acc[mt][2 * n2 + 1], pa[mt], vb[2], vb[3]);
        }
      }
    }
  }

  // ---- epilogue: normalise; one split writes o and lse, several write partials.
  // The combine kernel (launched as a programmatic dependent) may start now;
  // it waits for this grid's completion before reading the partials.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  if (lane % C::kLanesPerRow == 0) {
    l_s[sm_row] = l_run;
    m_s[sm_row] = m_run;
  }
  __syncthreads();
  const bool final_out = a.nsplit == 1;
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = mt * 16 + g + half * 8;
      if (row >= rows_valid) continue;
      const float l = l_s[row];
      const float inv = l > 0.f ? 1.f / l : 0.f;
      const long long bh = static_cast<long long>(b) * a.heads + h0 + row;
      if (final_out) {
        std::uint16_t* dst = a.o + bh * kDimV + lat0 + 2 * q4;
#pragma unroll
        for (int n = 0; n < C::kOTiles; ++n)
          *reinterpret_cast<std::uint32_t*>(dst + n * 8) =
              pack_bf16x2(o_acc[mt][n][2 * half] * inv, o_acc[mt][n][2 * half + 1] * inv);
      } else {
        float* dst = a.o_part + (bh * a.nsplit + split) * kDimV + lat0 + 2 * q4;
#pragma unroll
        for (int n = 0; n < C::kOTiles; ++n)
          *reinterpret_cast<float2*>(dst + n * 8) =
              make_float2(o_acc[mt][n][2 * half] * inv, o_acc[mt][n][2 * half + 1] * inv);
      }
    }
  if (lane % C::kLanesPerRow == 0 && sm_row < rows_valid) {
    const long long bh = static_cast<long long>(b) * a.heads + h0 + sm_row;
    const float lse2 = l_run > 0.f ? m_run + log2f(l_run) : kNegInf;
    if (final_out) {
      a.lse[bh] = l_run > 0.f ? lse2 * 0.69314718055994531f : kNegInf;
    } else {
      a.lse_part[bh * a.nsplit + split] = lse2;
    }
  }
}

template <int BlockT, int NumWarps, int NumStages>
struct SplitKernels {
  static const void* kernel(int block_h) {
    return block_h == 16 ? reinterpret_cast<const void*>(&split_kv_kernel<BlockT, NumWarps, NumStages, 16>)
                         : reinterpret_cast<const void*>(&split_kv_kernel<BlockT, NumWarps, NumStages, 32>);
  }
  static void launch(int block_h, const SplitArgs& args, unsigned grid, int smem_bytes, cudaStream_t stream) {
    if (block_h == 16)
      split_kv_kernel<BlockT, NumWarps, NumStages, 16><<<grid, 32 * NumWarps, smem_bytes, stream>>>(args);
    else
      split_kv_kernel<BlockT, NumWarps, NumStages, 32><<<grid, 32 * NumWarps, smem_bytes, stream>>>(args);
  }
};

}  // namespace mla::cuda
