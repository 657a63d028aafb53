// The phases of the split-KV kernel (split_kv.cuh), each a device function
// over one CTA's state, in the order a tile meets them:
//
//   cta_work            which (batch element, head group, split) this CTA is
//   load_q              its q rows -> shared memory (cp.async)
//   fetch_indices,      index prefetch (one tile ahead, in registers) and the
//   issue_tile          cp.async gather of a tile's rows into a landing stage
//   load_q_fragments    q -> registers (when they fit), once
//   dequantize_tile     fp8 only: a landed stage -> the bf16 tile
//   tile_scores         partial S = Q.K^T of this warp's k-steps -> shared memory
//   tile_softmax        the online softmax of this lane's part of a row -> P, alpha
//   tile_pv             O = alpha * O + P.V over this warp's output columns
//   write_outputs       normalise; o and lse, or the split's partials
//
// The KV dtype enters only through the config (row bytes, landing layout) and
// dequantize_tile: every phase after it reads a bf16 tile, so a new cache
// format needs a gather geometry and a dequantisation, nothing else.
//
// Included only by split_kv.cuh. Every function is force-inlined, so the
// kernel compiles to what it was before the split: for bf16 the same
// instructions (the same count of each opcode, the same registers and no new
// spills; 8 of the 36 kernels byte-identical, the others with registers
// assigned differently), and the same time on the H200 within the noise
// between processes (kernels/BENCHMARKS.md, 2026-12-01). Keep it so: a
// value whose range the compiler must know to unroll (the gather's column)
// stays a local of the kernel, not a member of an object.
#pragma once

#include <cstdint>

#include "cuda_tuning.h"
#include "device_ops.cuh"
#include "kernel_table.h"
#include "launch_plan.h"
#include "mla/problem.h"

namespace mla::cuda {

template <int BlockT, int NumWarps, int NumStages, int BlockH, KvDtype Dtype>
struct SplitConfig {
  static constexpr int kBlockT = BlockT, kNumWarps = NumWarps, kNumStages = NumStages, kBlockH = BlockH;
  static constexpr KvDtype kDtype = Dtype;
  static constexpr int kThreads = 32 * NumWarps;
  static constexpr int kLatentPerWarp = kDimLatent / NumWarps;      // output and k columns of a warp
  static constexpr int kLatentKSteps = kLatentPerWarp / 16;
  static constexpr int kRopeKSteps = kDimRope / 16;                 // 4, one each for warps 0..3
  static constexpr int kMTiles = BlockH / 16;
  static constexpr int kChunks = BlockT / 16;                      // 16-token k-steps of P.V
  static constexpr int kOTiles = kLatentPerWarp / 8;                // n-tiles of the accumulator
  static constexpr bool kQInRegs = q_in_registers(BlockH, NumWarps);
  static constexpr bool kFp8 = Dtype == KvDtype::kFp8E4m3;
  static constexpr int kScaleBlocks = kDimLatent / 128;             // fp8: latent values sharing a scale, 4 blocks
  static_assert(!kFp8 || (kDimLatent / NumWarps) <= 128, "fp8: a warp's latent columns lie in one scale block");
  // Byte offsets of the shared-memory regions (launch_plan.h sizes them).
  static constexpr SmemLayout kLayout = smem_layout(BlockT, NumWarps, NumStages, BlockH, Dtype);
  static constexpr int kOffKv = kLayout.kv, kOffTile = kLayout.tile, kOffIdx = kLayout.idx, kOffQ = kLayout.q;
  static constexpr int kOffScores = kLayout.scores, kOffProbs = kLayout.probs, kOffStats = kLayout.stats;
  static constexpr int kRowStride = kLayout.kv_row_stride;        // elements of the bf16 tile
  static constexpr int kLandRowBytes = kLayout.land_row_bytes;    // bytes of a landed row
  static constexpr int kStageBytes = kLayout.kv_stage;
  static constexpr int kScoreStride = BlockT + 8;                   // floats (scores), elements (probs)
  static constexpr int kChunksPerRow = kDimQK * 2 / 16;             // 72 16-byte pieces of a q row (and a tile row)
  static constexpr int kCacheRowBytes = kFp8 ? kFp8LandRowBytes : kDimQK * 2;  // a row in the cache: 656 or 1152
  static constexpr int kLandChunks = kCacheRowBytes / 16;           // 16-byte pieces the gather copies: 41 or 72
  static constexpr int kLoadRowsPerPass = kThreads / 8;             // 8 threads a row, 128 contiguous bytes
  static constexpr int kLoadRowsPerThread = (BlockT + kLoadRowsPerPass - 1) / kLoadRowsPerPass;
  static constexpr int kSoftmaxRowsPerWarp = BlockH / NumWarps;
  static constexpr int kLanesPerRow = 32 / kSoftmaxRowsPerWarp;
  static constexpr int kColsPerLane = BlockT / kLanesPerRow;
  // Register cap for the CTAs a multiprocessor should hold (H200 shared
  // memory allows them): bt16 x 4 warps cuda_tuning.h's kBt16W4MinBlocks
  // (three), 8 warps at bt16/bt32 two, 16-row tiles only (without it a few
  // more registers cost a CTA an SM).
  static constexpr int kMinBlocks =
      BlockH != 16 ? 1 : NumWarps == 8 ? (BlockT <= 32 ? 2 : 1) : (BlockT == 16 ? tuning::kBt16W4MinBlocks : 1);

  static_assert(kDimLatent % (16 * NumWarps) == 0, "latent columns must split into 16-wide k-steps");
  static_assert(NumWarps >= kRopeKSteps, "the rope k-steps go one to a warp");
  static_assert(BlockH % NumWarps == 0 && 32 % kSoftmaxRowsPerWarp == 0, "softmax rows must split evenly");
  static_assert(BlockT % kLanesPerRow == 0, "softmax columns must split evenly");
  static_assert(kOTiles % 2 == 0, "P.V loads two n-tiles per ldmatrix");
  static_assert(kCacheRowBytes % 16 == 0 && kLandRowBytes % 16 == 0, "rows are copied in 16-byte pieces");
};

namespace phase {

using namespace device;

// Which piece of the step this CTA computes. Block order: batch element,
// then split, then head group, so the head groups that share a tile's rows
// run side by side and meet in L2.
struct Work {
  int hg, split, b, h0, rows_valid;
  TileRange range;
};

__device__ __forceinline__ Work cta_work(const SplitArgs& a) {
  Work w;
  w.hg = static_cast<int>(blockIdx.x % static_cast<unsigned>(a.head_groups));
  const unsigned rest = blockIdx.x / static_cast<unsigned>(a.head_groups);
  w.split = static_cast<int>(rest % static_cast<unsigned>(a.nsplit));
  w.b = static_cast<int>(rest / static_cast<unsigned>(a.nsplit));
  w.range = tile_range(w.split, a.tiles, a.nsplit);
  w.h0 = w.hg * a.block_h;
  w.rows_valid = min(a.block_h, a.heads - w.h0);
  return w;
}

// A thread's place in the MMA fragments: the warp's latent columns, and the
// ldmatrix lane -> (row, column) offsets of each operand. Filled in three
// steps at the points of the kernel where they were computed before the
// phases were split out (the bf16 kernel's code stays the same, instruction
// for instruction): the lane at entry, the fragment offsets once q has
// landed, the softmax row before the tile loop.
template <class C>
struct Lanes {
  int warp, lane, g, q4;  // g, q4: the mma fragment's row group and column pair
  int a_row, a_col;       // A operand (16x16, row-major)
  int bk_tok, bk_dim;     // non-transposed B from [token][dim] rows (two n-tiles of tokens)
  int bv_tok, bv_dim;     // transposed B from [token][dim] rows (two n-tiles of dims)
  int lat0;               // first latent column of this warp
  bool has_rope;          // this warp also owns a rope k-step
  int rope0;
  int sm_row, sm_col;     // the softmax row this lane helps own, and its first column

  __device__ __forceinline__ explicit Lanes(int tid) {
    warp = tid / 32;
    lane = tid % 32;
    g = lane / 4;
    q4 = lane % 4;
  }
  __device__ __forceinline__ void set_fragments() {
    a_row = (lane / 8 % 2) * 8 + lane % 8;
    a_col = (lane / 16) * 8;
    bk_tok = (lane / 16) * 8 + lane % 8;
    bk_dim = (lane / 8 % 2) * 8;
    bv_tok = (lane / 8 % 2) * 8 + lane % 8;
    bv_dim = (lane / 16) * 8;
    lat0 = warp * C::kLatentPerWarp;
    has_rope = warp < C::kRopeKSteps;
    rope0 = kDimLatent + (warp % C::kRopeKSteps) * 16;
  }
  __device__ __forceinline__ void set_softmax_row() {
    sm_row = warp * C::kSoftmaxRowsPerWarp + lane / C::kLanesPerRow;
    sm_col = (lane % C::kLanesPerRow) * C::kColsPerLane;
  }
  // First dimension of k-step ks: this warp's latent steps, then its rope step.
  __device__ __forceinline__ int k_dim(int ks) const { return ks < C::kLatentKSteps ? lat0 + ks * 16 : rope0; }
};

// The CTA's q rows -> shared memory, one cp.async group; rows past the group are zero.
template <class C>
__device__ __forceinline__ void load_q(const SplitArgs& a, const Work& w, std::uint16_t* q_s, int tid) {
  constexpr int RS = C::kRowStride;
  const std::uint16_t* qg = a.q + (static_cast<long long>(w.b) * a.heads + w.h0) * kDimQK;
  for (int c = tid; c < C::kBlockH * C::kChunksPerRow; c += C::kThreads) {
    const int r = c / C::kChunksPerRow, k = c % C::kChunksPerRow;
    const bool ok = r < w.rows_valid;
    cp_async16(q_s + r * RS + k * 8, ok ? qg + r * kDimQK + k * 8 : a.q, ok ? 16 : 0);
  }
  cp_async_commit();
}

// The gather: 8 threads a row (load_row = tid / 8, load_col = tid % 8),
// 16-byte pieces of the row as the cache stores it; the row indices of the
// next tile wait in registers (next_idx) one iteration ahead of their use. A
// masked row (-1) lands as zeros. (Free functions over the kernel's locals,
// not an object holding them: the compiler then still knows load_col < 8
// and unrolls the piece loop completely, as it did before the split.)
template <class C>
__device__ __forceinline__ void fetch_indices(int (&next_idx)[C::kLoadRowsPerThread], const SplitArgs& a,
                                              const std::int32_t* ind, const TileRange& range, int load_row,
                                              int tile) {
#pragma unroll
  for (int j = 0; j < C::kLoadRowsPerThread; ++j) {
    const int r = load_row + j * C::kLoadRowsPerPass;
    const int token = tile * C::kBlockT + r;
    next_idx[j] = (r < C::kBlockT && tile < range.last && token < a.topk) ? __ldg(ind + token) : -1;
  }
}

// (Rows are addressed in 16-bit units -- 576 a bf16 row, 328 an fp8 row --
// so that the bf16 kernel's address arithmetic is what it was.)
template <class C>
__device__ __forceinline__ void issue_tile(const int (&next_idx)[C::kLoadRowsPerThread], const SplitArgs& a,
                                           const TileRange& range, std::uint16_t* land, int* idx_s, int load_row,
                                           int load_col, int tile) {
  if (tile >= range.last) return;
  const int stage = tile % C::kNumStages;
  std::uint16_t* const dst_stage = land + stage * (C::kStageBytes / 2);
#pragma unroll
  for (int j = 0; j < C::kLoadRowsPerThread; ++j) {
    const int r = load_row + j * C::kLoadRowsPerPass;
    if (r < C::kBlockT) {
      const int idx = next_idx[j];
      if (load_col == 0) idx_s[stage * C::kBlockT + r] = idx;
      const std::uint16_t* const kv = static_cast<const std::uint16_t*>(a.kv);
      const std::uint16_t* src = idx >= 0 ? kv + static_cast<long long>(idx) * (C::kCacheRowBytes / 2) : kv;
      const int bytes = idx >= 0 ? 16 : 0;
      std::uint16_t* dst = dst_stage + r * (C::kLandRowBytes / 2);
#pragma unroll
      for (int k = load_col; k < C::kLandChunks; k += 8) cp_async16(dst + k * 8, src + k * 8, bytes);
    }
  }
}

// The indices of the first NumStages - 1 tiles load together (one memory
// latency, not one a tile), then their rows, one cp.async group a tile; the
// next tile's indices are left in next_idx.
template <class C>
__device__ __forceinline__ void gather_prologue(int (&next_idx)[C::kLoadRowsPerThread], const SplitArgs& a,
                                                const std::int32_t* ind, const TileRange& range, std::uint16_t* land,
                                                int* idx_s, int load_row, int load_col) {
  constexpr int NumStages = C::kNumStages;
  int pro_idx[NumStages > 1 ? NumStages - 1 : 1][C::kLoadRowsPerThread];
#pragma unroll
  for (int s = 0; s < NumStages - 1; ++s) {
    fetch_indices<C>(next_idx, a, ind, range, load_row, range.first + s);
#pragma unroll
    for (int j = 0; j < C::kLoadRowsPerThread; ++j) pro_idx[s][j] = next_idx[j];
  }
#pragma unroll
  for (int s = 0; s < NumStages - 1; ++s) {
#pragma unroll
    for (int j = 0; j < C::kLoadRowsPerThread; ++j) next_idx[j] = pro_idx[s][j];
    issue_tile<C>(next_idx, a, range, land, idx_s, load_row, load_col, range.first + s);
    cp_async_commit();
  }
  fetch_indices<C>(next_idx, a, ind, range, load_row, range.first + NumStages - 1);
}

// q fragments of every k-step of this warp, loaded once (when kQInRegs).
template <class C>
using QFragments = std::uint32_t[C::kQInRegs ? C::kMTiles : 1][C::kQInRegs ? C::kLatentKSteps + 1 : 1][4];

template <class C>
__device__ __forceinline__ void load_q_fragments(QFragments<C>& qf, const std::uint16_t* q_s, const Lanes<C>& l) {
  constexpr int RS = C::kRowStride;
  if constexpr (C::kQInRegs) {
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
      for (int ks = 0; ks <= C::kLatentKSteps; ++ks)
        if (ks < C::kLatentKSteps || l.has_rope) ldmatrix_x4(qf[mt][ks], q_s + (mt * 16 + l.a_row) * RS + l.k_dim(ks) + l.a_col);
  }
}

// fp8: a landed stage (656-byte rows) -> the bf16 tile (1168-byte rows), in
// the tile's 16-byte pieces: piece k < 64 holds latent values 8k..8k+7 (eight
// e4m3 bytes, converted exactly; their scale is applied later, in fp32),
// pieces 64..71 the rope values as they are. Consecutive threads take
// consecutive pieces of a row, so the reads and the writes of a warp hit
// distinct banks.
template <class C>
__device__ __forceinline__ void dequantize_tile(const unsigned char* land, std::uint16_t* tile, int tid) {
  constexpr int RS = C::kRowStride;
  constexpr int kLatentPieces = kDimLatent / 8;
  constexpr int kPieces = C::kBlockT * C::kChunksPerRow;
  constexpr int kRounds = (kPieces + C::kThreads - 1) / C::kThreads;
#pragma unroll
  for (int i = 0; i < kRounds; ++i) {
    const int u = i * C::kThreads + tid;
    if (kPieces % C::kThreads != 0 && u >= kPieces) break;
    const int r = u / C::kChunksPerRow, k = u % C::kChunksPerRow;
    const unsigned char* src = land + r * C::kLandRowBytes;
    uint4 out;
    if (k < kLatentPieces) {
      const uint2 in = *reinterpret_cast<const uint2*>(src + 8 * k);
      fp8x4_to_bf16x4(in.x, out.x, out.y);
      fp8x4_to_bf16x4(in.y, out.z, out.w);
    } else {
      out = *reinterpret_cast<const uint4*>(src + kDimLatent + 16 + 16 * (k - kLatentPieces));
    }
    *reinterpret_cast<uint4*>(tile + r * RS + 8 * k) = out;
  }
}

// fp8: scale `blk` of token row `t` of a landed stage.
template <class C>
__device__ __forceinline__ float fp8_scale(const unsigned char* land, int t, int blk) {
  return *reinterpret_cast<const float*>(land + t * C::kLandRowBytes + kDimLatent + 4 * blk);
}

// Partial scores of this warp's k-steps, every chunk of the tile, into the
// warp's slice of the score buffer (raw dot products; the scale comes in the
// softmax). (Two accumulator sets for one-chunk tiles, to halve the MMA
// chain, cost bt16_w4 ten registers and its third CTA an SM: slower,
// measured. So did skipping the O rescale while alpha == 1: 14 registers.)
//
// fp8: the tile holds the e4m3 values unscaled; once this warp's latent
// k-steps are summed, each token's partial score is multiplied by the token's
// scale of this warp's block (land: the landed stage), then the rope k-step
// (bf16, unscaled) adds to it.
template <class C>
__device__ __forceinline__ void tile_scores(const std::uint16_t* kvt, const QFragments<C>& qf, const std::uint16_t* q_s,
                                            float* sc_s, const Lanes<C>& l, const unsigned char* land = nullptr) {
  constexpr int RS = C::kRowStride;
  constexpr int SS = C::kScoreStride;
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
    if constexpr (C::kFp8) {
      if (ks == C::kLatentKSteps) {
        const int blk = l.lat0 / 128;
#pragma unroll
        for (int c = 0; c < C::kChunks; ++c)
#pragma unroll
          for (int n = 0; n < 2; ++n) {
            const int t = c * 16 + n * 8 + 2 * l.q4;
            const float s0 = fp8_scale<C>(land, t, blk), s1 = fp8_scale<C>(land, t + 1, blk);
#pragma unroll
            for (int mt = 0; mt < C::kMTiles; ++mt) {
              s_acc[0][c][mt][n][0] *= s0; s_acc[0][c][mt][n][1] *= s1;
              s_acc[0][c][mt][n][2] *= s0; s_acc[0][c][mt][n][3] *= s1;
            }
          }
      }
    }
    if (ks == C::kLatentKSteps && !l.has_rope) break;
    const int d0 = l.k_dim(ks);
    std::uint32_t qa[C::kMTiles][4];
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt) {
      if constexpr (C::kQInRegs) {
#pragma unroll
        for (int e = 0; e < 4; ++e) qa[mt][e] = qf[mt][ks][e];
      } else {
        ldmatrix_x4(qa[mt], q_s + (mt * 16 + l.a_row) * RS + d0 + l.a_col);
      }
    }
#pragma unroll
    for (int c = 0; c < C::kChunks; ++c) {
      std::uint32_t kb[4];
      ldmatrix_x4(kb, kvt + (c * 16 + l.bk_tok) * RS + d0 + l.bk_dim);
#pragma unroll
      for (int mt = 0; mt < C::kMTiles; ++mt) {
        mma_bf16(s_acc[ks % kSets][c][mt][0], qa[mt], kb[0], kb[1]);
        mma_bf16(s_acc[ks % kSets][c][mt][1], qa[mt], kb[2], kb[3]);
      }
    }
  }
  float* const scw = sc_s + l.warp * C::kBlockH * SS;
#pragma unroll
  for (int c = 0; c < C::kChunks; ++c)
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const int col = c * 16 + n * 8 + 2 * l.q4;
        *reinterpret_cast<float2*>(scw + (mt * 16 + l.g) * SS + col) =
            make_float2(s_acc[0][c][mt][n][0], s_acc[0][c][mt][n][1]);
        *reinterpret_cast<float2*>(scw + (mt * 16 + l.g + 8) * SS + col) =
            make_float2(s_acc[0][c][mt][n][2], s_acc[0][c][mt][n][3]);
      }
}

// The online softmax of this lane's part of its row: sums the warps' partial
// scores, masks the tile's invalid tokens, updates the running max m_run and
// sum l_run, writes the probabilities (bf16) and the row's rescale factor.
//
// fp8: the probabilities are written once per scale block b, each times its
// token's scale b (land: the landed stage), so the warps of block b read P
// already scaled for the unscaled e4m3 values of their columns; the running
// sum stays that of the unscaled probabilities.
template <class C>
__device__ __forceinline__ void tile_softmax(const float* sc_s, const int* tidx_stage, float scale_log2,
                                             std::uint16_t* p_s, float* alpha_s, const Lanes<C>& l, float& m_run,
                                             float& l_run, const unsigned char* land = nullptr) {
  constexpr int SS = C::kScoreStride;
  constexpr int CPL = C::kColsPerLane;
  float x[CPL];
#pragma unroll
  for (int j = 0; j < CPL; ++j) x[j] = 0.f;
#pragma unroll
  for (int w = 0; w < C::kNumWarps; ++w) {
    const float* src = sc_s + (w * C::kBlockH + l.sm_row) * SS + l.sm_col;
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
  const int* const tidx = tidx_stage + l.sm_col;
  float tmax = kNegInf;
#pragma unroll
  for (int j = 0; j < CPL; ++j) {
    x[j] = tidx[j] >= 0 ? x[j] * scale_log2 : kNegInf;
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
  std::uint16_t* const pdst = p_s + l.sm_row * SS + l.sm_col;
  if constexpr (C::kFp8) {
#pragma unroll
    for (int j = 0; j < CPL; ++j) {
      const float4 sc = *reinterpret_cast<const float4*>(land + (l.sm_col + j) * C::kLandRowBytes + kDimLatent);
      const float s[4] = {sc.x, sc.y, sc.z, sc.w};
#pragma unroll
      for (int b = 0; b < C::kScaleBlocks; ++b) pdst[b * C::kBlockH * SS + j] = to_bf16(x[j] * s[b]);
    }
  } else if constexpr (CPL % 2 == 0) {
#pragma unroll
    for (int j = 0; j < CPL; j += 2) *reinterpret_cast<std::uint32_t*>(pdst + j) = pack_bf16x2(x[j], x[j + 1]);
  } else {
#pragma unroll
    for (int j = 0; j < CPL; ++j) pdst[j] = to_bf16(x[j]);
  }
  if (l.lane % C::kLanesPerRow == 0) alpha_s[l.sm_row] = alpha;
}

template <class C>
using OAccumulator = float[C::kMTiles][C::kOTiles][4];

// O = alpha * O + P . V over this warp's output columns.
template <class C>
__device__ __forceinline__ void tile_pv(OAccumulator<C>& o_acc, const std::uint16_t* kvt, const std::uint16_t* p_s,
                                        const float* alpha_s, const Lanes<C>& l) {
  constexpr int RS = C::kRowStride;
  constexpr int SS = C::kScoreStride;
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt) {
    const float lo = alpha_s[mt * 16 + l.g], hi = alpha_s[mt * 16 + l.g + 8];
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
    for (int mt = 0; mt < C::kMTiles; ++mt) ldmatrix_x4(pa[mt], p_s + (mt * 16 + l.a_row) * SS + c * 16 + l.a_col);
#pragma unroll
    for (int n2 = 0; n2 < C::kOTiles / 2; ++n2) {
      std::uint32_t vb[4];
      ldmatrix_x4_trans(vb, kvt + (c * 16 + l.bv_tok) * RS + l.lat0 + n2 * 16 + l.bv_dim);
#pragma unroll
      for (int mt = 0; mt < C::kMTiles; ++mt) {
        mma_bf16(o_acc[mt][2 * n2], pa[mt], vb[0], vb[1]);
        mma_bf16(o_acc[mt][2 * n2 + 1], pa[mt], vb[2], vb[3]);
      }
    }
  }
}

// Normalise; one split writes o (bf16) and lse (natural log), several write
// their partials (fp32, log2-domain lse) for the combine kernel.
template <class C>
__device__ __forceinline__ void write_outputs(const SplitArgs& a, const Work& w, const OAccumulator<C>& o_acc,
                                              float* l_s, float* m_s, const Lanes<C>& l, float m_run, float l_run) {
  if (l.lane % C::kLanesPerRow == 0) {
    l_s[l.sm_row] = l_run;
    m_s[l.sm_row] = m_run;
  }
  __syncthreads();
  const bool final_out = a.nsplit == 1;
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = mt * 16 + l.g + half * 8;
      if (row >= w.rows_valid) continue;
      const float lsum = l_s[row];
      const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
      const long long bh = static_cast<long long>(w.b) * a.heads + w.h0 + row;
      if (final_out) {
        std::uint16_t* dst = a.o + bh * kDimV + l.lat0 + 2 * l.q4;
#pragma unroll
        for (int n = 0; n < C::kOTiles; ++n)
          *reinterpret_cast<std::uint32_t*>(dst + n * 8) =
              pack_bf16x2(o_acc[mt][n][2 * half] * inv, o_acc[mt][n][2 * half + 1] * inv);
      } else {
        float* dst = a.o_part + (bh * a.nsplit + w.split) * kDimV + l.lat0 + 2 * l.q4;
#pragma unroll
        for (int n = 0; n < C::kOTiles; ++n)
          *reinterpret_cast<float2*>(dst + n * 8) =
              make_float2(o_acc[mt][n][2 * half] * inv, o_acc[mt][n][2 * half + 1] * inv);
      }
    }
  if (l.lane % C::kLanesPerRow == 0 && l.sm_row < w.rows_valid) {
    const long long bh = static_cast<long long>(w.b) * a.heads + w.h0 + l.sm_row;
    const float lse2 = l_run > 0.f ? m_run + log2f(l_run) : kNegInf;
    if (final_out) {
      a.lse[bh] = l_run > 0.f ? lse2 * 0.69314718055994531f : kNegInf;
    } else {
      a.lse_part[bh * a.nsplit + w.split] = lse2;
    }
  }
}

}  // namespace phase
}  // namespace mla::cuda
