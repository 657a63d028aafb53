// Tuning constants of the CUDA backend that are not variant parameters:
// changing one is a source change that rebuilds the kernels, as a kernel
// engineer's tuning commit does. (perfwatch's demo history on a GPU, in
// scripts/demo_repo.sh, replays a commit that flips one and its revert, as
// src/cpu_tuning.h is flipped on a CPU.) The values here are the shipped
// kernel; kernels/BENCHMARKS.md has what the alternatives measured.
#pragma once

namespace mla::cuda::tuning {

// CTAs a multiprocessor is meant to hold of the bt16 x 4-warp split kernels
// with 16-row head tiles: the minimum-blocks term of their __launch_bounds__,
// so the compiler caps registers at 65536 / (128 threads x this), rounded
// down to its allocation unit of 8.
//   3: 168 registers a thread, above the 157 the kernels need (no spills);
//      their shared memory (38..76 KB) lets 3 CTAs an SM.
//   4: 128 registers: 32..40 bytes of spills a thread. Measured on the H200
//      (BENCHMARKS.md, experiment 9): bt16_w4_s2 10..35 % slower where 3 CTAs
//      an SM already hold the grid in one wave (B 96 at target_ctas 384,
//      B 64 and B 80 at 240), faster only where a 4th CTA saves a wave.
// MLA_EXP_BT16_W4_MIN_BLOCKS (CMake's MLA_CUDA_DEFINES) overrides it for an
// experiment build timed beside the default one (scripts/h200_bench.sh).
#ifdef MLA_EXP_BT16_W4_MIN_BLOCKS
inline constexpr int kBt16W4MinBlocks = MLA_EXP_BT16_W4_MIN_BLOCKS;
#else
inline constexpr int kBt16W4MinBlocks = 3;
#endif

// CTAs a multiprocessor is meant to hold of the fp8 bt32 x 4-warp split
// kernels with 16-row head tiles and 1..2 stages (41..62 KB of shared memory,
// so three fit).
//   3: 168 registers a thread, no spills (uncapped they take 190..194 and
//      two CTAs an SM). Measured on the H200 (BENCHMARKS.md, 2026-12-02,
//      experiment 13): bt32_w4_s2 at B 96 tc 384 80.4 -> 59.9 us, the new
//      best fp8 B 96; slower where two CTAs an SM already held the grid in
//      one wave (B 48 tc 240 38.0 -> 40.7 us, B 8 tc 96 17.2 -> 18.1).
//   1: uncapped.
// MLA_EXP_FP8_BT32_W4_MIN_BLOCKS overrides it for an experiment build.
#ifdef MLA_EXP_FP8_BT32_W4_MIN_BLOCKS
inline constexpr int kFp8Bt32W4MinBlocks = MLA_EXP_FP8_BT32_W4_MIN_BLOCKS;
#else
inline constexpr int kFp8Bt32W4MinBlocks = 3;
#endif

// How the gather lands a tile's rows (split_kv_phases.cuh, issue_tile):
//   false: 16-byte cp.async pieces, 8 threads a row (72 a bf16 row, 41 an
//          fp8 row), cp.async groups and wait_group a stage;
//   true:  one bulk copy a row (cp.async.bulk, the copy engine; sm_90), a
//          shared-memory mbarrier a stage counting the rows' bytes; masked
//          rows are zeroed with ordinary stores. Fewer instructions and
//          fewer, larger requests a row.
// MLA_EXP_BULK_GATHER (0 or 1) overrides it for an experiment build.
#ifdef MLA_EXP_BULK_GATHER
inline constexpr bool kBulkGather = MLA_EXP_BULK_GATHER != 0;
#else
inline constexpr bool kBulkGather = false;
#endif

// Barriers a tile of the split kernel with the bulk gather and 2+ stages
// (split_kv.cuh): 4 (as with cp.async), 3 (none after the wait for the
// tile's rows) or 2 (none at the top either: the freed stage is refilled
// after the tile's first barrier, one tile fewer in flight).
// MLA_EXP_BULK_TILE_BARRIERS overrides it for an experiment build.
#ifdef MLA_EXP_BULK_TILE_BARRIERS
inline constexpr int kBulkTileBarriers = MLA_EXP_BULK_TILE_BARRIERS;
#else
inline constexpr int kBulkTileBarriers = 4;
#endif
static_assert(kBulkTileBarriers >= 2 && kBulkTileBarriers <= 4, "a tile has 2, 3 or 4 barriers");

// How a step's split kernel is launched:
//   false: an ordinary launch, after whatever ran before it has finished;
//   true:  a programmatic dependent launch (as the combine already is): its
//          CTAs may become resident while the kernel before it (the previous
//          step's combine, or split when nsplit is 1) finishes, and wait for
//          it (griddepcontrol.wait) before their first global read or write;
//          the combine lets its dependent launch (launch_dependents) once it
//          is running. Hides the split's launch latency, as a model's decode
//          hides it behind the kernel before attention.
// MLA_EXP_SPLIT_PDL (0 or 1) overrides it for an experiment build.
#ifdef MLA_EXP_SPLIT_PDL
inline constexpr bool kSplitPdl = MLA_EXP_SPLIT_PDL != 0;
#else
inline constexpr bool kSplitPdl = false;
#endif

}  // namespace mla::cuda::tuning
