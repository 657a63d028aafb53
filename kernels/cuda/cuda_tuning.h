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

// fp8 kernels: skip a warp's O rescale in a tile where every one of its rows'
// factor is exactly 1 (the running max did not move and the scale exponent
// did not change: most tiles after the first few), a warp-uniform branch.
// MLA_EXP_FP8_SKIP_UNIT_RESCALE overrides it for an experiment build.
#ifdef MLA_EXP_FP8_SKIP_UNIT_RESCALE
inline constexpr bool kFp8SkipUnitRescale = MLA_EXP_FP8_SKIP_UNIT_RESCALE != 0;
#else
inline constexpr bool kFp8SkipUnitRescale = false;
#endif

// fp8 kernels with one 16-token chunk and 16 head rows (bt16, bh16): the
// latent Q.K^T k-steps of a chunk accumulate into this many independent
// chains (1 or 2: even and odd k-steps), halving the dependent MMA chain for
// 8 more registers. MLA_EXP_FP8_QK_SETS overrides it for an experiment build.
#ifdef MLA_EXP_FP8_QK_SETS
inline constexpr int kFp8QkSets = MLA_EXP_FP8_QK_SETS;
#else
inline constexpr int kFp8QkSets = 1;
#endif

}  // namespace mla::cuda::tuning
