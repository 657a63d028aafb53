// Host-side arithmetic of the CUDA split-KV decode: which variants are
// compiled, how each lays out its shared memory, whether it fits a device,
// and how a point is launched. Plain C++ (no CUDA headers), so it is unit
// tested where there is no GPU; the kernels include it too, so the layout the
// host sizes is the layout the device uses.
#pragma once

#include <string>
#include <vector>

#include "mla/problem.h"

#if defined(__CUDACC__)
#define MLA_PLAN_HD __host__ __device__
#else
#define MLA_PLAN_HD
#endif

namespace mla::cuda {

// One compiled split kernel: a (block_t, num_warps, num_stages) variant at one
// of the two head-tile heights, for one KV cache dtype. block_h here is the
// kernel's tile height (16 or 32 rows of the MMA), not the point's heads per
// CTA: a point with min(32, H) = 8 heads runs the 16-row kernel with 8 rows
// masked.
struct KernelShape {
  int block_t = 32;
  int num_warps = 4;
  int num_stages = 2;
  int block_h = 16;
  KvDtype dtype = KvDtype::kBf16;
};

inline constexpr int kBlockTs[] = {16, 32, 64};
inline constexpr int kNumWarps[] = {4, 8};
inline constexpr int kNumStages[] = {1, 2, 3};
inline constexpr int kBlockHs[] = {16, 32};
inline constexpr KvDtype kDtypes[] = {KvDtype::kBf16, KvDtype::kFp8E4m3};

// True when (block_t, num_warps, num_stages) is one of the compiled variants.
bool is_compiled(const VariantParams& variant);
// Every compiled (block_t, num_warps, num_stages), block_h left at 16 and
// dtype at bf16 (each is compiled for both dtypes and both tile heights).
std::vector<KernelShape> compiled_shapes();

// The kernel tile height for a point's heads per CTA (plan_split's block_h).
MLA_PLAN_HD constexpr int kernel_block_h(int split_block_h) { return split_block_h <= 16 ? 16 : 32; }

// Q stays in registers for the whole CTA unless its fragments and the output
// accumulator together would not fit (32 rows over 4 warps: 72 + 128
// registers a thread); then it is re-read from shared memory every tile.
MLA_PLAN_HD constexpr bool q_in_registers(int block_h, int num_warps) { return !(block_h == 32 && num_warps == 4); }

// Tiles [first, last) of `split`: the same dealing as mla::split_tiles,
// written once more for the device (a test holds the two equal).
MLA_PLAN_HD constexpr TileRange tile_range(int split, int tiles, int nsplit) {
  return {static_cast<int>(static_cast<long long>(split) * tiles / nsplit),
          static_cast<int>(static_cast<long long>(split + 1) * tiles / nsplit)};
}

// Shared memory of one CTA, in bytes, region by region (offsets from the
// dynamic shared memory base; every region starts 16-byte aligned).
//
// The gather lands rows as the cache stores them (kv, num_stages stages),
// and the products read the landed stage itself: bf16 rows of 1168 bytes
// (576 values + 16 bytes of padding), or fp8 rows of 656 bytes whose e4m3
// values each lane converts into its MMA fragments (no converted tile; the
// scales are read from the landed rows). Everything after the stages is laid
// out alike for both dtypes.
struct SmemLayout {
  int kv_row_stride = 0;   // elements of the bf16 tile: 576 + 8 of padding so ldmatrix rows hit distinct banks
  int land_row_bytes = 0;  // bytes a landed row takes: 1168 (bf16) or 656 (fp8)
  int kv_stage = 0;        // bytes of one landing stage: block_t rows
  int kv = 0;              // offset of the landing stages (always 0)
  int tile = 0;            // offset of the tile the products read: kv (the landed stage in use), both dtypes
  int idx = 0;             // offset: per stage, block_t row indices (-1 = masked or past topk)
  int q = 0;               // offset: the CTA's q rows, [block_h][kv_row_stride] bf16
  int scores = 0;          // offset: per-warp partial scores, [warps][block_h][block_t + 8] fp32
  int probs = 0;           // offset: the tile's probabilities, [block_h][block_t + 8] bf16 (fp8: fp16)
  int stats = 0;           // offset: per row alpha, l and m, 3 x [block_h] fp32
  int total = 0;           // bytes
};

MLA_PLAN_HD constexpr int align16(int bytes) { return (bytes + 15) / 16 * 16; }

// Bytes of an fp8 row as it lands in shared memory: the cache's 656 (a
// multiple of 16, and 16 mod 128, so 8 rows of 16-byte pieces hit distinct banks).
inline constexpr int kFp8LandRowBytes = kDimLatent + 4 * 4 + 2 * kDimRope;

MLA_PLAN_HD constexpr SmemLayout smem_layout(int block_t, int num_warps, int num_stages, int block_h,
                                             KvDtype dtype = KvDtype::kBf16) {
  SmemLayout s;
  s.kv_row_stride = kDimQK + 8;
  const bool fp8 = dtype == KvDtype::kFp8E4m3;
  s.land_row_bytes = fp8 ? kFp8LandRowBytes : s.kv_row_stride * 2;
  s.kv_stage = block_t * s.land_row_bytes;
  s.kv = 0;
  s.tile = s.kv;
  s.idx = s.kv + num_stages * s.kv_stage;
  const int q_bytes = block_h * s.kv_row_stride * 2;
  const int score_bytes = num_warps * block_h * (block_t + 8) * 4;
  s.q = s.idx + align16(num_stages * block_t * 4);
  // With q in registers its staging area is dead after the first tile and
  // holds the partial scores instead.
  if (q_in_registers(block_h, num_warps)) {
    s.scores = s.q;
    s.probs = s.q + align16(q_bytes > score_bytes ? q_bytes : score_bytes);
  } else {
    s.scores = s.q + align16(q_bytes);
    s.probs = s.scores + align16(score_bytes);
  }
  s.stats = s.probs + align16(block_h * (block_t + 8) * 2);
  s.total = s.stats + align16(3 * block_h * 4);
  return s;
}

inline SmemLayout smem_layout(const KernelShape& k) {
  return smem_layout(k.block_t, k.num_warps, k.num_stages, k.block_h, k.dtype);
}

// What the device offers a CTA.
struct DeviceLimits {
  long long smem_per_block_optin = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
  long long smem_per_sm = 0;           // cudaDevAttrMaxSharedMemoryPerMultiprocessor
  long long smem_reserved_per_block = 0;  // cudaDevAttrReservedSharedMemoryPerBlock
  int multiprocessors = 0;
};

// The H200 (sm_90) and the users' consumer Blackwell cards (sm_120), for the
// arithmetic in tests and BENCHMARKS.md; the backend reads the real device.
DeviceLimits h200_limits();
DeviceLimits sm120_limits();

struct Fit {
  bool fits = true;
  std::string reason;  // when !fits: the bytes asked for and the limit
};

// Whether a kernel's shared memory fits the device's per-block opt-in limit.
Fit check_fit(const KernelShape& kernel, const DeviceLimits& device);

// Whether it fits the users' sm_120 cards (99 KB a block), as the variant
// lines report next to what the device in hand allows.
bool fits_sm120(const KernelShape& kernel);

// CTAs of one kernel that shared memory alone lets one SM hold (the occupancy
// API has the last word on the device; this is its shared-memory term).
int smem_blocks_per_sm(const KernelShape& kernel, const DeviceLimits& device);

// target_ctas as the user gave it, 0 resolved to two per SM.
int resolve_target_ctas(int target_ctas, int multiprocessors);

// How one variant runs one point.
struct LaunchShape {
  SplitPlan split;               // mla::plan_split, never re-derived
  KernelShape kernel;            // the compiled kernel this point uses
  long long split_grid = 0;      // 1-D: b-major, then split, then head group
  int split_threads = 0;
  int split_smem = 0;
  bool combine = false;          // nsplit > 1: partials go through the combine kernel
  long long combine_grid = 0;    // one CTA per (b, h)
  int combine_threads = 0;      // combine_groups(nsplit) x 128
  long long partial_o_floats = 0;   // [B, H, nsplit, 512] fp32 when combine
  long long partial_lse_floats = 0; // [B, H, nsplit]
};

// Combine CTA: `groups` groups of 128 threads (four output columns a
// thread), each group summing every groups-th split, eight splits a round.
// One group up to 16 splits (a small CTA keeps the whole combine grid in one
// wave), four beyond (fewer rounds of memory latency for long split lists).
// (Merging in the split kernel instead, by the last CTA of each head group to
// finish, measured 3-7 us slower a step at B = 48..128 on the H200: that one
// CTA's serial merge becomes the tail of the step. See kernels/BENCHMARKS.md.)
inline constexpr int kCombineColumnThreads = kDimV / 4;
inline constexpr int kCombineMaxGroups = 4;
MLA_PLAN_HD constexpr int combine_groups(int nsplit) { return nsplit > 16 ? kCombineMaxGroups : 1; }

// REQUIRES: is_compiled(variant), point valid, multiprocessors >= 1. The
// kernel is the one for the point's dtype.
LaunchShape launch_shape(const VariantParams& variant, const Point& point, int multiprocessors);

// Input sets that make the timed working set at least twice the L2: each
// step touches bytes_per_step(point) of its own; at least two sets so
// consecutive steps never read the same rows. requested > 0 is taken as is.
int input_sets_for(const Point& point, long long l2_bytes, int requested);

// Decode steps in one timed graph: enough for min_trial_ms at the estimated
// step time, a whole number of rotations through `sets`, at most max_steps.
int steps_for(double step_us_estimate, double min_trial_ms, int sets, int max_steps);

// "split_kv<bt32,w4,s2,bh16>" (bf16), "split_kv_fp8<bt32,w4,s2,bh16>" (fp8).
std::string kernel_name(const KernelShape& kernel);

}  // namespace mla::cuda
