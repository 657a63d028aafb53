// The phases of the split-KV kernel (split_kv.cuh), each a device function
// over one CTA's state, in the order a tile meets them:
//
//   cta_work            which (batch element, head group, split) this CTA is
//   load_q              its q rows -> shared memory (cp.async)
//   fetch_indices,      index prefetch (one tile ahead, in registers) and the
//   issue_tile          gather of a tile's rows into a landing stage (one bulk
//                       copy a row, or cp.async pieces; wait_tile waits for it)
//   q_latent_to_f16     fp8 only: q's latent part -> fp16 in shared memory, once
//   load_q_fragments    q -> registers (when they fit), once
//   tile_scores         partial S = Q.K^T of this warp's k-steps -> shared memory
//                       (fp8: tile_scores_fp8)
//   tile_softmax        the online softmax of this lane's part of a row -> P, alpha
//   tile_pv             O = alpha * O + P.V over this warp's output columns
//                       (fp8: tile_pv_fp8)
//   write_outputs       normalise; o and lse, or the split's partials
//
// The KV dtype enters through the config (row bytes, landing layout) and the
// fp8 products: the fp8 kernel reads the landed 656-byte rows directly,
// converts each lane's e4m3 bytes exactly to fp16 MMA fragments (one cvt a
// pair), and applies the per-128 scales in fp32 to the partial scores and in
// fp16 to the P fragments of each warp's block (see tile_scores_fp8 and
// tile_pv_fp8); no converted tile, no fifth barrier.
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
  // fp8: 16-byte pieces of a token's latent bytes one lane converts for Q.K^T
  // (2 with 4 warps, 1 with 8), and bytes of a token it converts for P.V (the
  // lane's column of each of the warp's kOTiles n-tiles).
  static constexpr int kFp8KPieces = kLatentPerWarp / 64;
  static constexpr int kFp8VBytes = kOTiles;
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
  static constexpr bool kBulkGather = tuning::kBulkGather;          // one bulk copy a row (cuda_tuning.h)
  static constexpr int kTileBarriers =                              // 4, or 3 / 2 with the bulk gather (split_kv.cuh)
      kBulkGather && NumStages >= 2 ? tuning::bulk_tile_barriers(BlockT) : 4;
  static constexpr int kSoftmaxRowsPerWarp = BlockH / NumWarps;
  static constexpr int kLanesPerRow = 32 / kSoftmaxRowsPerWarp;
  static constexpr int kColsPerLane = BlockT / kLanesPerRow;
  // Register cap for the CTAs a multiprocessor should hold (H200 shared
  // memory allows them): bt16 x 4 warps cuda_tuning.h's kBt16W4MinBlocks
  // (three), 8 warps at bt16/bt32 two, 16-row tiles only (without it a few
  // more registers cost a CTA an SM); fp8 bt32 x 4 warps with 1..2 stages
  // (62 KB of shared memory at most) kFp8Bt32W4MinBlocks.
  static constexpr int kMinBlocks =
      BlockH != 16       ? 1
      : NumWarps == 8    ? (BlockT <= 32 ? 2 : 1)
      : BlockT == 16     ? tuning::kBt16W4MinBlocks
      : (BlockT == 32 && Dtype == KvDtype::kFp8E4m3 && NumStages <= 2) ? tuning::kFp8Bt32W4MinBlocks
                         : 1;

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
// 16-byte cp.async pieces of the row as the cache stores it, or with the
// bulk gather one copy of the whole row by its first thread; the row indices
// of the next tile wait in registers (next_idx) one iteration ahead of their
// use. A masked row (-1) lands as zeros. (Free functions over the kernel's locals,
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
//
// With the bulk gather (C::kBulkGather) the row's first thread arrives on the
// stage's mbarrier (bars, one a stage, kBlockT arrivals a phase) announcing
// the row's bytes and starts one bulk copy of the whole row; a masked row's
// 8 threads store its zeros themselves (then fence them against the copy
// engine's later writes there) and its first thread arrives announcing none.
template <class C>
__device__ __forceinline__ void issue_tile(const int (&next_idx)[C::kLoadRowsPerThread], const SplitArgs& a,
                                           const TileRange& range, std::uint16_t* land, int* idx_s,
                                           std::uint64_t* bars, int load_row, int load_col, int tile) {
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
      std::uint16_t* dst = dst_stage + r * (C::kLandRowBytes / 2);
      if constexpr (C::kBulkGather) {
        if (load_col == 0) {
          mbar_arrive_expect_tx(bars + stage, idx >= 0 ? C::kCacheRowBytes : 0);
          if (idx >= 0) bulk_copy_g2s(dst, src, C::kCacheRowBytes, bars + stage);
        }
        if (idx < 0) {
#pragma unroll
          for (int k = load_col; k < C::kLandChunks; k += 8) *reinterpret_cast<uint4*>(dst + k * 8) = make_uint4(0, 0, 0, 0);
          fence_proxy_async_smem();
        }
      } else {
        const int bytes = idx >= 0 ? 16 : 0;
#pragma unroll
        for (int k = load_col; k < C::kLandChunks; k += 8) cp_async16(dst + k * 8, src + k * 8, bytes);
      }
    }
  }
}

// The bulk gather's stage barriers: initialised by one thread, published to
// the CTA (and the copy engine) before the first row is issued.
template <class C>
__device__ __forceinline__ void init_stage_barriers(std::uint64_t* bars, int tid) {
  if constexpr (C::kBulkGather) {
    if (tid == 0) {
#pragma unroll
      for (int s = 0; s < C::kNumStages; ++s) mbar_init(bars + s, C::kBlockT);
      fence_mbar_init();
    }
    __syncthreads();
  }
}

// Waits until tile's rows have landed in its stage (this thread's view; the
// barrier after it publishes the masked rows' zeros and the indices). The
// k-th tile a stage holds completes that stage barrier's phase k.
template <class C>
__device__ __forceinline__ void wait_tile(std::uint64_t* bars, const TileRange& range, int tile) {
  if constexpr (C::kBulkGather) {
    mbar_wait(bars + tile % C::kNumStages, static_cast<unsigned>((tile - range.first) / C::kNumStages) & 1u);
  } else {
    cp_async_wait<C::kNumStages - 1>();
  }
}

// The indices of the first NumStages - 1 tiles load together (one memory
// latency, not one a tile), then their rows, one cp.async group a tile; the
// next tile's indices are left in next_idx.
template <class C>
__device__ __forceinline__ void gather_prologue(int (&next_idx)[C::kLoadRowsPerThread], const SplitArgs& a,
                                                const std::int32_t* ind, const TileRange& range, std::uint16_t* land,
                                                int* idx_s, std::uint64_t* bars, int load_row, int load_col) {
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
    issue_tile<C>(next_idx, a, range, land, idx_s, bars, load_row, load_col, range.first + s);
    cp_async_commit();
  }
  fetch_indices<C>(next_idx, a, ind, range, load_row, range.first + NumStages - 1);
}

// q fragments of every k-step of this warp, loaded once (when kQInRegs).
template <class C>
using QFragments = std::uint32_t[C::kQInRegs ? C::kMTiles : 1][C::kQInRegs ? C::kLatentKSteps + 1 : 1][4];

template <class C>
__device__ __forceinline__ void q_fp8_fragment(std::uint32_t (&qa)[4], const std::uint16_t* q_s, int mt, int ks,
                                               const Lanes<C>& l);

// (fp8: the latent k-steps in q_fp8_fragment's order, from the fp16 rows;
// the rope k-step bf16, as for a bf16 cache.)
template <class C>
__device__ __forceinline__ void load_q_fragments(QFragments<C>& qf, const std::uint16_t* q_s, const Lanes<C>& l) {
  constexpr int RS = C::kRowStride;
  if constexpr (C::kQInRegs) {
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
      for (int ks = 0; ks <= C::kLatentKSteps; ++ks) {
        if constexpr (C::kFp8) {
          if (ks < C::kLatentKSteps) {
            q_fp8_fragment<C>(qf[mt][ks], q_s, mt, ks, l);
            continue;
          }
        }
        if (ks < C::kLatentKSteps || l.has_rope) ldmatrix_x4(qf[mt][ks], q_s + (mt * 16 + l.a_row) * RS + l.k_dim(ks) + l.a_col);
      }
  }
}

// fp8: the latent part of the CTA's q rows (bf16, in shared memory) ->
// fp16 in place, for the fp16 products with the exactly converted e4m3
// values. Multiplied by 2^-e, e >= 0 the least that brings the CTA's largest
// |q| under 2^15 (e = 0, an exact conversion, unless some |q| >= 2^15); the
// scores take 2^e back with the cache scales (the return value). The rope
// part stays bf16. Ends with the barrier that publishes the converted rows.
template <class C>
__device__ __forceinline__ float q_latent_to_f16(std::uint16_t* q_s, unsigned* scratch, int tid) {
  constexpr int RS = C::kRowStride;
  constexpr int kRowPieces = kDimLatent / 8;  // 16-byte pieces of a row's latent part
  constexpr int kPieces = C::kBlockH * kRowPieces;
  unsigned amax = 0;  // bits of the largest |q| (non-negative floats order as their bits)
  for (int u = tid; u < kPieces; u += C::kThreads) {
    const uint4 v = *reinterpret_cast<const uint4*>(q_s + (u / kRowPieces) * RS + 8 * (u % kRowPieces));
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) amax = max(amax, max((w[i] << 16) & 0x7fffffffu, w[i] & 0x7fff0000u));
  }
  amax = __reduce_max_sync(0xffffffffu, amax);
  if (tid % 32 == 0) scratch[tid / 32] = amax;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < C::kNumWarps; ++w) amax = max(amax, scratch[w]);
  const int ex = static_cast<int>(min(amax >> 23, 254u)) - 127;  // floor(log2 max |q|)
  const int e = ex >= 15 ? ex - 14 : 0;
  const float down = __uint_as_float(static_cast<unsigned>(127 - e) << 23);
  for (int u = tid; u < kPieces; u += C::kThreads) {
    uint4* const p = reinterpret_cast<uint4*>(q_s + (u / kRowPieces) * RS + 8 * (u % kRowPieces));
    const uint4 v = *p;
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
    unsigned o[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      o[i] = pack_f16x2(__uint_as_float(w[i] << 16) * down, __uint_as_float(w[i] & 0xffff0000u) * down);
    *p = make_uint4(o[0], o[1], o[2], o[3]);
  }
  __syncthreads();
  return __uint_as_float(static_cast<unsigned>(127 + e) << 23);
}

// fp8: the A fragment (fp16 q) of latent k-step ks for m-tile mt. The k
// order inside this warp's columns is permuted to match the K fragments
// (tile_scores_fp8): lane (g, q4) of k-step ks holds columns
// lat0 + 16 kFp8KPieces q4 + 4 ks + {0, 1} (fragment k 2q4, 2q4 + 1) and
// + {2, 3} (k 2q4 + 8, 2q4 + 9), i.e. one 8-byte load a row.
template <class C>
__device__ __forceinline__ void q_fp8_fragment(std::uint32_t (&qa)[4], const std::uint16_t* q_s, int mt, int ks,
                                               const Lanes<C>& l) {
  constexpr int RS = C::kRowStride;
  const std::uint16_t* const p = q_s + (mt * 16 + l.g) * RS + l.lat0 + 16 * C::kFp8KPieces * l.q4 + 4 * ks;
  const uint2 lo = *reinterpret_cast<const uint2*>(p);
  const uint2 hi = *reinterpret_cast<const uint2*>(p + 8 * RS);
  qa[0] = lo.x;
  qa[1] = hi.x;
  qa[2] = lo.y;
  qa[3] = hi.y;
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
template <class C>
__device__ __forceinline__ void tile_scores(const std::uint16_t* kvt, const QFragments<C>& qf, const std::uint16_t* q_s,
                                            float* sc_s, const Lanes<C>& l) {
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

// fp8: this warp's scale of the tile's tokens c * 16 + 2 q4 + {0, 1, 8, 9}
// (the columns of the lane's score fragments, and the k rows of its P
// fragments), read from the landed rows.
template <class C>
using TileScales = float[C::kChunks][4];

template <class C>
__device__ __forceinline__ void load_tile_scales(TileScales<C>& ts, const unsigned char* land, const Lanes<C>& l) {
  const int blk = l.lat0 / 128;
#pragma unroll
  for (int c = 0; c < C::kChunks; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) ts[c][i] = fp8_scale<C>(land, c * 16 + 2 * l.q4 + (i % 2) + (i / 2) * 8, blk);
}

__device__ __forceinline__ std::uint32_t word_of(const uint4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// fp8: partial scores of this warp's k-steps, as tile_scores, straight from
// the landed rows. The K fragment of lane (g, q4) for token g of an n-tile
// is its own 16 kFp8KPieces bytes of the token's latent e4m3 values (pieces
// kFp8KPieces q4 + i of the warp's 128 or 64 bytes: 16-byte loads, and with
// 656-byte rows (16 mod 128) the 8 lanes of each load phase hit distinct
// banks with 4 warps); its 4-byte word ks is k-step ks, converted exactly to
// fp16 (one cvt a pair: fragment k 2q4, 2q4 + 1 from the low half, 2q4 + 8,
// 2q4 + 9 from the high half; q_fp8_fragment permutes q's columns alike).
// Once the latent k-steps of a chunk are summed, each token's partial score
// is multiplied by its scale (ts) times qscale (q_latent_to_f16's 2^e), in
// fp32; then the rope k-step (bf16 from the landed rows, unscaled) adds to it.
template <class C>
__device__ __forceinline__ void tile_scores_fp8(const unsigned char* land, const QFragments<C>& qf,
                                                const std::uint16_t* q_s, float* sc_s, const Lanes<C>& l,
                                                const TileScales<C>& ts, float qscale) {
  constexpr int RS = C::kRowStride;
  constexpr int SS = C::kScoreStride;
  constexpr int LRB = C::kLandRowBytes;
  constexpr int NP = C::kFp8KPieces;
  // (Two accumulator chains for the even and odd k-steps of a bt16 chunk:
  // +3 registers and 2.4 % slower at B 96, measured; see BENCHMARKS.md.)
  float s_acc[C::kChunks][C::kMTiles][2][4];
#pragma unroll
  for (int c = 0; c < C::kChunks; ++c)
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s_acc[c][mt][0][e] = s_acc[c][mt][1][e] = 0.f;
#pragma unroll
  for (int c = 0; c < C::kChunks; ++c) {
    uint4 kw[2][NP];
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const unsigned char* const krow = land + (c * 16 + n * 8 + l.g) * LRB + l.lat0 + 16 * NP * l.q4;
#pragma unroll
      for (int i = 0; i < NP; ++i) kw[n][i] = *reinterpret_cast<const uint4*>(krow + 16 * i);
    }
#pragma unroll
    for (int ks = 0; ks < C::kLatentKSteps; ++ks) {
      std::uint32_t qa[C::kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < C::kMTiles; ++mt) {
        if constexpr (C::kQInRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) qa[mt][e] = qf[mt][ks][e];
        } else {
          q_fp8_fragment<C>(qa[mt], q_s, mt, ks, l);
        }
      }
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        std::uint32_t b0, b1;
        e4m3x4_to_f16x4(word_of(kw[n][ks / 4], ks % 4), b0, b1);
#pragma unroll
        for (int mt = 0; mt < C::kMTiles; ++mt) mma_f16(s_acc[c][mt][n], qa[mt], b0, b1);
      }
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const float s0 = ts[c][2 * n] * qscale, s1 = ts[c][2 * n + 1] * qscale;
#pragma unroll
      for (int mt = 0; mt < C::kMTiles; ++mt) {
        s_acc[c][mt][n][0] *= s0; s_acc[c][mt][n][1] *= s1;
        s_acc[c][mt][n][2] *= s0; s_acc[c][mt][n][3] *= s1;
      }
    }
    if (l.has_rope) {
      std::uint32_t kb[4];
      ldmatrix_x4(kb, land + (c * 16 + l.bk_tok) * LRB + kDimLatent + 16 + 2 * (l.rope0 - kDimLatent + l.bk_dim));
#pragma unroll
      for (int mt = 0; mt < C::kMTiles; ++mt) {
        std::uint32_t qa[4];
        if constexpr (C::kQInRegs) {
#pragma unroll
          for (int e = 0; e < 4; ++e) qa[e] = qf[mt][C::kLatentKSteps][e];
        } else {
          ldmatrix_x4(qa, q_s + (mt * 16 + l.a_row) * RS + l.rope0 + l.a_col);
        }
        mma_bf16(s_acc[c][mt][0], qa, kb[0], kb[1]);
        mma_bf16(s_acc[c][mt][1], qa, kb[2], kb[3]);
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
        *reinterpret_cast<float2*>(scw + (mt * 16 + l.g) * SS + col) = make_float2(s_acc[c][mt][n][0], s_acc[c][mt][n][1]);
        *reinterpret_cast<float2*>(scw + (mt * 16 + l.g + 8) * SS + col) =
            make_float2(s_acc[c][mt][n][2], s_acc[c][mt][n][3]);
      }
}

// The online softmax of this lane's part of its row: sums the warps' partial
// scores, masks the tile's invalid tokens, updates the running max m_run and
// sum l_run, writes the probabilities (bf16; fp16 for an fp8 cache, whose
// P.V runs in fp16) and the row's rescale factor.
template <class C>
__device__ __forceinline__ void tile_softmax(const float* sc_s, const int* tidx_stage, float scale_log2,
                                             std::uint16_t* p_s, float* alpha_s, const Lanes<C>& l, float& m_run,
                                             float& l_run) {
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
  if constexpr (C::kFp8 && CPL % 2 == 0) {
#pragma unroll
    for (int j = 0; j < CPL; j += 2) *reinterpret_cast<std::uint32_t*>(pdst + j) = pack_f16x2(x[j], x[j + 1]);
  } else if constexpr (C::kFp8) {
#pragma unroll
    for (int j = 0; j < CPL; ++j) pdst[j] = static_cast<std::uint16_t>(pack_f16x2(x[j], 0.f) & 0xFFFFu);
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

// fp8: O = alpha * O + P.V over this warp's output columns, straight from the
// landed rows. Every token of this warp's columns shares one scale (its block),
// so the scale goes on P: the fp16 P fragments (k = tokens) are multiplied by
// the tokens' scales in f16x2, and V is the exact fp16 of the e4m3 values.
// To keep P x scale in fp16's normal range the scales are first multiplied by
// 2^(127 - e_new), e_new this tile's largest scale's exponent field over the
// warp's block (the largest becomes [1, 2)); the accumulator holds O times
// 2^(127 - e_cur) and is rescaled with alpha when e_cur changes
// (write_outputs divides it out). The V fragment of lane (g, q4) in n-tile j
// is column lat0 + kFp8VBytes g + j of tokens 2q4, 2q4 + 1 (b0) and
// 2q4 + 8, 2q4 + 9 (b1): one 16- (8-) byte load a token, whose bytes of two
// tokens are interleaved into e4m3 pairs (prmt) and converted (one cvt a
// pair). So accumulator column 2q4 (+1) of n-tile j is output column
// lat0 + kFp8VBytes (2q4 (+1)) + j: the lane's outputs are 2 kFp8VBytes
// contiguous columns of each of its rows.
template <class C>
__device__ __forceinline__ void tile_pv_fp8(OAccumulator<C>& o_acc, const unsigned char* land, const std::uint16_t* p_s,
                                            const float* alpha_s, const Lanes<C>& l, const TileScales<C>& ts,
                                            int& e_cur) {
  constexpr int SS = C::kScoreStride;
  constexpr int LRB = C::kLandRowBytes;
  constexpr int VB = C::kFp8VBytes;
  static_assert(VB == 16 || VB == 8, "a lane converts 16 or 8 bytes of a token");
  float mx = 0.f;
#pragma unroll
  for (int c = 0; c < C::kChunks; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) mx = fmaxf(mx, fabsf(ts[c][i]));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  // (Skipping the rescale in a warp whose factors are all 1 was no faster:
  // e_new moves in most tiles. Measured; see BENCHMARKS.md.)
  int e_new = static_cast<int>((__float_as_uint(mx) >> 23) & 0xffu);
  e_new = e_new == 0 ? e_cur : min(e_new, 253);  // all-zero (masked) or subnormal scales: keep
  const int shift = max(-100, min(100, e_cur - e_new));
  const float r = __uint_as_float(static_cast<unsigned>(127 + shift) << 23);
  e_cur = e_new;
  const float f = __uint_as_float(static_cast<unsigned>(254 - e_new) << 23);
#pragma unroll
  for (int mt = 0; mt < C::kMTiles; ++mt) {
    const float lo = alpha_s[mt * 16 + l.g] * r, hi = alpha_s[mt * 16 + l.g + 8] * r;
#pragma unroll
    for (int n = 0; n < C::kOTiles; ++n) {
      o_acc[mt][n][0] *= lo; o_acc[mt][n][1] *= lo;
      o_acc[mt][n][2] *= hi; o_acc[mt][n][3] *= hi;
    }
  }
#pragma unroll
  for (int c = 0; c < C::kChunks; ++c) {
    const std::uint32_t sc_lo = pack_f16x2(ts[c][0] * f, ts[c][1] * f);
    const std::uint32_t sc_hi = pack_f16x2(ts[c][2] * f, ts[c][3] * f);
    std::uint32_t pa[C::kMTiles][4];
#pragma unroll
    for (int mt = 0; mt < C::kMTiles; ++mt) {
      ldmatrix_x4(pa[mt], p_s + (mt * 16 + l.a_row) * SS + c * 16 + l.a_col);
      pa[mt][0] = hmul2(pa[mt][0], sc_lo);
      pa[mt][1] = hmul2(pa[mt][1], sc_lo);
      pa[mt][2] = hmul2(pa[mt][2], sc_hi);
      pa[mt][3] = hmul2(pa[mt][3], sc_hi);
    }
    const unsigned char* const v0 = land + (c * 16 + 2 * l.q4) * LRB + l.lat0 + VB * l.g;
    std::uint32_t t[4][VB / 4];  // tokens 2q4, 2q4 + 1, 2q4 + 8, 2q4 + 9
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const unsigned char* const src = v0 + ((i % 2) + (i / 2) * 8) * LRB;
      if constexpr (VB == 16) {
        const uint4 v = *reinterpret_cast<const uint4*>(src);
        t[i][0] = v.x; t[i][1] = v.y; t[i][2] = v.z; t[i][3] = v.w;
      } else {
        const uint2 v = *reinterpret_cast<const uint2*>(src);
        t[i][0] = v.x; t[i][1] = v.y;
      }
    }
#pragma unroll
    for (int w = 0; w < VB / 4; ++w) {
      std::uint32_t b0[4], b1[4];
      e4m3x4_to_f16x4(__byte_perm(t[0][w], t[1][w], 0x5140), b0[0], b0[1]);
      e4m3x4_to_f16x4(__byte_perm(t[0][w], t[1][w], 0x7362), b0[2], b0[3]);
      e4m3x4_to_f16x4(__byte_perm(t[2][w], t[3][w], 0x5140), b1[0], b1[1]);
      e4m3x4_to_f16x4(__byte_perm(t[2][w], t[3][w], 0x7362), b1[2], b1[3]);
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int mt = 0; mt < C::kMTiles; ++mt) mma_f16(o_acc[mt][4 * w + j], pa[mt], b0[j], b1[j]);
    }
  }
}

// Normalise; one split writes o (bf16) and lse (natural log), several write
// their partials (fp32, log2-domain lse) for the combine kernel.
//
// fp8: the accumulator holds O times 2^(127 - e_cur) (tile_pv_fp8) in the
// column order of tile_pv_fp8: the lane's 2 kFp8VBytes contiguous columns.
template <class C>
__device__ __forceinline__ void write_outputs(const SplitArgs& a, const Work& w, const OAccumulator<C>& o_acc,
                                              float* l_s, float* m_s, const Lanes<C>& l, float m_run, float l_run,
                                              int e_cur = 127) {
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
      if constexpr (C::kFp8) {
        constexpr int VB = C::kFp8VBytes;
        const float sc = inv * __uint_as_float(static_cast<unsigned>(e_cur) << 23);
        const int col0 = l.lat0 + 2 * VB * l.q4;
#pragma unroll
        for (int hcol = 0; hcol < 2; ++hcol) {  // columns col0 + [0, VB) and col0 + VB + [0, VB)
          const int e = 2 * half + hcol;
          if (final_out) {
            std::uint16_t* dst = a.o + bh * kDimV + col0 + hcol * VB;
#pragma unroll
            for (int j = 0; j < VB; j += 8)
              *reinterpret_cast<uint4*>(dst + j) = make_uint4(
                  pack_bf16x2(o_acc[mt][j][e] * sc, o_acc[mt][j + 1][e] * sc),
                  pack_bf16x2(o_acc[mt][j + 2][e] * sc, o_acc[mt][j + 3][e] * sc),
                  pack_bf16x2(o_acc[mt][j + 4][e] * sc, o_acc[mt][j + 5][e] * sc),
                  pack_bf16x2(o_acc[mt][j + 6][e] * sc, o_acc[mt][j + 7][e] * sc));
          } else {
            float* dst = a.o_part + (bh * a.nsplit + w.split) * kDimV + col0 + hcol * VB;
#pragma unroll
            for (int j = 0; j < VB; j += 4)
              *reinterpret_cast<float4*>(dst + j) = make_float4(o_acc[mt][j][e] * sc, o_acc[mt][j + 1][e] * sc,
                                                                o_acc[mt][j + 2][e] * sc, o_acc[mt][j + 3][e] * sc);
          }
        }
        continue;
      }
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
