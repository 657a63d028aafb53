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
//   true:  one bulk copy a row (cp.async.bulk, the copy engine; sm_90 and
//          sm_120), a shared-memory mbarrier a stage counting the rows'
//          bytes; masked rows are zeroed with ordinary stores. Measured on
//          the H200 (BENCHMARKS.md, 2026-12-02 second session, runs 1..2):
//          fp8 B 96 bt32_w4_s2 tc 384 59.5 -> 55.0 us, every fp8 point
//          faster but B 1; with 2..3 barriers a tile (below) bf16 B 96
//          bt16_w4_s2 69.1 -> 65.9 us; bf16 B 48 bt32_w4_s2 38.1 -> 38.8.
//          The gather alone (scripts/gather_probe.cu): 656-byte rows 3.12 ->
//          3.46 TB/s, 1152-byte rows 3.85 -> 3.89 TB/s at the best shape.
//   false: 16-byte cp.async pieces, 8 threads a row (72 a bf16 row, 41 an
//          fp8 row), cp.async groups and wait_group a stage.
// MLA_EXP_BULK_GATHER (0 or 1) overrides it for an experiment build.
#ifdef MLA_EXP_BULK_GATHER
inline constexpr bool kBulkGather = MLA_EXP_BULK_GATHER != 0;
#else
inline constexpr bool kBulkGather = true;
#endif

// Barriers a tile of the split kernel with the bulk gather and 2+ stages
// (split_kv.cuh): 4 (as with cp.async), 3 (none after the wait for the
// tile's rows) or 2 (none at the top either: the freed stage is refilled
// after the tile's first barrier, one tile fewer in flight). Measured
// (run 2, each beside 4): 3 is as fast or faster everywhere; 2 is faster
// still for 16-token tiles (bf16 B 96 bt16_w4_s2 67.5 -> 65.9 us, fp8 B 96
// bt16_w4_s3 63.8 -> 59.4) and slower for 32..64-token tiles, which
// need the extra tile in flight (bf16 B 64 bt64_w8_s2 45.1 -> 53.9, fp8
// B 96 bt32_w4_s2 55.0 -> 56.5). So 2 for block_t 16, 3 above.
// MLA_EXP_BULK_TILE_BARRIERS overrides it for every block_t.
constexpr int bulk_tile_barriers(int block_t) {
#ifdef MLA_EXP_BULK_TILE_BARRIERS
  return block_t > 0 ? MLA_EXP_BULK_TILE_BARRIERS : 0;
#else
  return block_t == 16 ? 2 : 3;
#endif
}
static_assert(bulk_tile_barriers(16) >= 2 && bulk_tile_barriers(16) <= 4 && bulk_tile_barriers(64) >= 2 &&
                  bulk_tile_barriers(64) <= 4,
              "a tile has 2, 3 or 4 barriers");

// How a step's split kernel is launched:
//   true:  a programmatic dependent launch (as the combine already is): its
//          CTAs may become resident while the kernel before it (the previous
//          step's combine, or split when nsplit is 1) finishes, and wait for
//          it (griddepcontrol.wait) before their first global read or write;
//          the combine lets its dependent launch (launch_dependents) once it
//          is running. Hides the split's launch latency, as a model's decode
//          hides it behind the kernel before attention. Measured (run 1,
//          beside an ordinary launch): B 1 -7 %, B 8 -1.5 %, B 96 -1.2 %; but
//          a grid of fewer CTAs than slots may be placed unevenly while the
//          combine still holds SMs (bf16 B 8 bt32_w4_s2 tc 96 15.0 -> 19.4 us,
//          B 48 bt16_w4_s3 tc 240 +34 % in run 2), so the best target_ctas
//          of a variant can move.
//   false: an ordinary launch, after whatever ran before it has finished.
// MLA_EXP_SPLIT_PDL (0 or 1) overrides it for an experiment build.
#ifdef MLA_EXP_SPLIT_PDL
inline constexpr bool kSplitPdl = MLA_EXP_SPLIT_PDL != 0;
#else
inline constexpr bool kSplitPdl = true;
#endif

}  // namespace mla::cuda::tuning
