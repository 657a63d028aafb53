// The CUDA backend's host-side arithmetic, without a GPU: which variants are
// compiled, the shared-memory layout the kernels use, which variants fit the
// H200 and the sm_120 cards, the split and grid of a point, and the timing
// input sets.
#include <algorithm>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "launch_plan.h"
#include "mla/problem.h"

namespace mla::cuda {
namespace {

TEST(CudaLaunchPlan, CompilesExactlyTheEighteenVariants) {
  int compiled = 0;
  for (int bt : {8, 16, 32, 48, 64, 128})
    for (int w : {2, 4, 8, 16})
      for (int s : {0, 1, 2, 3, 4}) {
        const bool expect = (bt == 16 || bt == 32 || bt == 64) && (w == 4 || w == 8) && (s >= 1 && s <= 3);
        EXPECT_EQ(is_compiled({bt, w, s, 0}), expect) << bt << " " << w << " " << s;
        compiled += expect;
      }
  EXPECT_EQ(compiled, 18);
  EXPECT_EQ(compiled_shapes().size(), 18u);
}

TEST(CudaLaunchPlan, DeviceTileRangeMatchesSplitTiles) {
  for (int tiles : {1, 2, 3, 7, 32, 63, 64, 128, 1000, 65536})
    for (int nsplit : {1, 2, 3, 5, 7, 31, 64, 127, 128})
      if (nsplit <= tiles) {
        SplitPlan plan;
        plan.tiles = tiles;
        plan.nsplit = nsplit;
        int covered = 0;
        for (int s = 0; s < nsplit; ++s) {
          const TileRange want = split_tiles(plan, s);
          const TileRange got = tile_range(s, tiles, nsplit);
          ASSERT_EQ(got.first, want.first) << tiles << "/" << nsplit << " split " << s;
          ASSERT_EQ(got.last, want.last) << tiles << "/" << nsplit << " split " << s;
          ASSERT_LT(got.first, got.last) << "empty split";
          covered += got.last - got.first;
        }
        EXPECT_EQ(covered, tiles);
      }
}

TEST(CudaLaunchPlan, SmemRegionsAreAlignedOrderedAndDisjoint) {
  for (const KernelShape& base : compiled_shapes())
    for (int bh : kBlockHs) {
      KernelShape k = base;
      k.block_h = bh;
      const SmemLayout s = smem_layout(k);
      SCOPED_TRACE(kernel_name(k));
      EXPECT_EQ(s.kv_row_stride, 584);
      EXPECT_EQ(s.kv_row_stride * 2 % 16, 0) << "cp.async needs 16-byte aligned rows";
      // ldmatrix reads 8 rows at one column: a row stride of 16 mod 128 bytes
      // puts them in 8 distinct 16-byte bank groups.
      EXPECT_EQ(s.kv_row_stride * 2 % 128, 16);
      EXPECT_EQ(s.kv_stage, k.block_t * 1168);
      for (int off : {s.kv, s.idx, s.q, s.scores, s.probs, s.stats, s.total}) EXPECT_EQ(off % 16, 0);
      EXPECT_EQ(s.kv, 0);
      EXPECT_GE(s.idx, s.kv + k.num_stages * s.kv_stage);
      EXPECT_GE(s.q, s.idx + k.num_stages * k.block_t * 4);
      const int q_bytes = bh * 584 * 2;
      const int score_bytes = k.num_warps * bh * (k.block_t + 8) * 4;
      if (q_in_registers(bh, k.num_warps)) {
        EXPECT_EQ(s.scores, s.q) << "scores reuse the q staging area";
        EXPECT_GE(s.probs, s.q + std::max(q_bytes, score_bytes));
      } else {
        EXPECT_GE(s.scores, s.q + q_bytes);
        EXPECT_GE(s.probs, s.scores + score_bytes);
      }
      EXPECT_GE(s.stats, s.probs + bh * (k.block_t + 8) * 2);
      EXPECT_GE(s.total, s.stats + 3 * bh * 4);
    }
}

TEST(CudaLaunchPlan, SmemTotalOfOneVariantByHand) {
  // bt64 w4 s2 bh16: 2 stages x 64 x 1168 = 149504, indices 512, q 18688
  // (> scores 4 x 16 x 72 x 4 = 18432, which reuse it), probs 16 x 72 x 2 =
  // 2304, stats 192.
  EXPECT_EQ(smem_layout(64, 4, 2, 16).total, 149504 + 512 + 18688 + 2304 + 192);
  // bt64 w4 s2 bh32 keeps q in shared memory beside the scores.
  EXPECT_FALSE(q_in_registers(32, 4));
  EXPECT_EQ(smem_layout(64, 4, 2, 32).total, 149504 + 512 + 37376 + 36864 + 4608 + 384);
}

TEST(CudaLaunchPlan, OnTheH200OnlyThreeStagesOf64RowsDoNotFit) {
  const DeviceLimits h200 = h200_limits();
  std::set<std::tuple<int, int, int, int>> infeasible;
  for (const KernelShape& base : compiled_shapes())
    for (int bh : kBlockHs) {
      KernelShape k = base;
      k.block_h = bh;
      const Fit fit = check_fit(k, h200);
      if (!fit.fits) {
        infeasible.insert({k.block_t, k.num_warps, k.num_stages, bh});
        EXPECT_NE(fit.reason.find(std::to_string(smem_layout(k).total)), std::string::npos) << fit.reason;
        EXPECT_NE(fit.reason.find("232448"), std::string::npos) << fit.reason;
        EXPECT_EQ(smem_blocks_per_sm(k, h200), 0);
      } else {
        EXPECT_GE(smem_blocks_per_sm(k, h200), 1);
      }
    }
  const std::set<std::tuple<int, int, int, int>> want = {
      {64, 4, 3, 16}, {64, 8, 3, 16}, {64, 4, 3, 32}, {64, 8, 3, 32}};
  EXPECT_EQ(infeasible, want);
  // Two CTAs of bt32 s2 share an SM: the shape the memory-bound points want.
  EXPECT_EQ(smem_blocks_per_sm({32, 4, 2, 16}, h200), 2);
  EXPECT_EQ(smem_blocks_per_sm({64, 4, 2, 16}, h200), 1);
}

TEST(CudaLaunchPlan, OnSm120The99KbLimitDropsTheDeepTiles) {
  const DeviceLimits sm120 = sm120_limits();
  auto fits = [&](int bt, int w, int s, int bh) { return check_fit({bt, w, s, bh}, sm120).fits; };
  // Every 16-row variant of 16 tokens fits; so do bt32 with up to 2 stages and bt64 w4 with 1.
  for (int w : {4, 8})
    for (int s : {1, 2, 3}) EXPECT_TRUE(fits(16, w, s, 16));
  EXPECT_TRUE(fits(32, 4, 2, 16));
  EXPECT_TRUE(fits(32, 8, 2, 16));
  EXPECT_FALSE(fits(32, 4, 3, 16));
  EXPECT_TRUE(fits(64, 4, 1, 16));
  EXPECT_FALSE(fits(64, 8, 1, 16));
  EXPECT_FALSE(fits(64, 4, 2, 16));
  // 32-row tiles: bt16 (s3 only with 8 warps), bt32 with one stage.
  EXPECT_FALSE(fits(16, 4, 3, 32));
  EXPECT_TRUE(fits(16, 8, 3, 32));
  EXPECT_TRUE(fits(32, 4, 1, 32));
  EXPECT_FALSE(fits(32, 8, 2, 32));
  EXPECT_FALSE(fits(64, 8, 1, 32));
}

// ---- The fp8 cache: 656-byte rows land in the stages and the products read
// them there (each lane converts its fragments); no converted tile.

TEST(CudaLaunchPlan, Fp8LayoutLandsRowsOf656BytesAndReadsThemInPlace) {
  for (const KernelShape& base : compiled_shapes())
    for (int bh : kBlockHs) {
      KernelShape k = base;
      k.block_h = bh;
      k.dtype = KvDtype::kFp8E4m3;
      const SmemLayout s = smem_layout(k);
      SCOPED_TRACE(kernel_name(k));
      EXPECT_EQ(s.land_row_bytes, 656);
      EXPECT_EQ(s.land_row_bytes % 16, 0) << "cp.async copies 16-byte pieces";
      // Eight rows of 16-byte pieces at one column land in distinct bank groups.
      EXPECT_EQ(s.land_row_bytes % 128, 16);
      EXPECT_EQ(s.kv_stage, k.block_t * 656);
      EXPECT_EQ(s.kv_row_stride, 584);
      EXPECT_EQ(s.tile, s.kv) << "the products read the landed stage";
      EXPECT_EQ(s.idx, k.num_stages * s.kv_stage);
      for (int off : {s.kv, s.tile, s.idx, s.q, s.scores, s.probs, s.stats, s.total}) EXPECT_EQ(off % 16, 0);
      // After the stages, laid out as for bf16 (one copy of P, fp16).
      KernelShape bf16 = k;
      bf16.dtype = KvDtype::kBf16;
      const SmemLayout b = smem_layout(bf16);
      EXPECT_EQ(b.tile, b.kv) << "bf16 reads the landed stage itself";
      EXPECT_EQ(s.total - s.idx, b.total - b.idx);
      EXPECT_EQ(s.stats - s.probs, b.stats - b.probs);
    }
}

TEST(CudaLaunchPlan, Fp8SmemTotalOfOneVariantByHand) {
  // bt64 w4 s2 bh16: 2 stages x 64 x 656 = 83968, indices 512, q 18688
  // (scores 18432 reuse it), P 2304, stats 192.
  EXPECT_EQ(smem_layout(64, 4, 2, 16, KvDtype::kFp8E4m3).total, 83968 + 512 + 18688 + 2304 + 192);
  // bt16 w4 s2 bh16: 20992 + 128 + 18688 + 768 + 192.
  EXPECT_EQ(smem_layout(16, 4, 2, 16, KvDtype::kFp8E4m3).total, 40768);
}

std::set<std::tuple<int, int, int, int>> infeasible_on(const DeviceLimits& device, KvDtype dtype) {
  std::set<std::tuple<int, int, int, int>> out;
  for (const KernelShape& base : compiled_shapes())
    for (int bh : kBlockHs) {
      KernelShape k = base;
      k.block_h = bh;
      k.dtype = dtype;
      if (!check_fit(k, device).fits) out.insert({k.block_t, k.num_warps, k.num_stages, bh});
    }
  return out;
}

TEST(CudaLaunchPlan, Fp8OnTheH200) {
  // The stages cost 656 bytes a row instead of 1168 and nothing else is
  // added: every fp8 kernel fits, the largest bt64 w4 s3 bh32 (205952 bytes).
  EXPECT_TRUE(infeasible_on(h200_limits(), KvDtype::kFp8E4m3).empty());
  EXPECT_EQ(smem_layout(64, 4, 3, 32, KvDtype::kFp8E4m3).total, 205952);
  EXPECT_EQ(smem_layout(64, 4, 3, 16, KvDtype::kFp8E4m3).total, 147904);
  // bt16 w4 s2: five CTAs an SM by shared memory (registers allow three).
  EXPECT_EQ(smem_blocks_per_sm({16, 4, 2, 16, KvDtype::kFp8E4m3}, h200_limits()), 5);
}

TEST(CudaLaunchPlan, Fp8OnSm120) {
  const DeviceLimits sm120 = sm120_limits();
  auto fits = [&](int bt, int w, int s, int bh) { return check_fit({bt, w, s, bh, KvDtype::kFp8E4m3}, sm120).fits; };
  // 16 heads: every bt16 and bt32 variant, bt64 with one stage.
  for (int w : {4, 8})
    for (int s : {1, 2, 3}) {
      EXPECT_TRUE(fits(16, w, s, 16));
      EXPECT_TRUE(fits(32, w, s, 16));
      EXPECT_EQ(fits(64, w, s, 16), s == 1);
    }
  // 32 heads: every bt16 variant; bt32 with one stage, or two with 8 warps; no bt64.
  for (int w : {4, 8})
    for (int s : {1, 2, 3}) {
      EXPECT_TRUE(fits(16, w, s, 32));
      EXPECT_FALSE(fits(64, w, s, 32));
    }
  EXPECT_TRUE(fits(32, 4, 1, 32));
  EXPECT_FALSE(fits(32, 4, 2, 32));  // 103040 of 101376 bytes
  EXPECT_TRUE(fits(32, 8, 2, 32));
  EXPECT_FALSE(fits(32, 8, 3, 32));
  // fits_sm120 is check_fit against the sm_120 limits, for both dtypes.
  for (const KernelShape& base : compiled_shapes())
    for (KvDtype dtype : kDtypes)
      for (int bh : kBlockHs) {
        KernelShape k = base;
        k.block_h = bh;
        k.dtype = dtype;
        EXPECT_EQ(fits_sm120(k), check_fit(k, sm120).fits) << kernel_name(k);
      }
}

TEST(CudaLaunchPlan, APointPicksTheKernelOfItsDtype) {
  Point p{96, 16, 2048, KvDtype::kFp8E4m3};
  const LaunchShape s = launch_shape({16, 4, 2, 384}, p, 132);
  EXPECT_EQ(s.kernel.dtype, KvDtype::kFp8E4m3);
  EXPECT_EQ(s.split_smem, smem_layout(16, 4, 2, 16, KvDtype::kFp8E4m3).total);
  EXPECT_EQ(s.split.nsplit, 4);
  EXPECT_EQ(kernel_name(s.kernel), "split_kv_fp8<bt16,w4,s2,bh16>");
  p.dtype = KvDtype::kBf16;
  EXPECT_EQ(launch_shape({16, 4, 2, 384}, p, 132).split_smem, smem_layout(16, 4, 2, 16).total);
}

TEST(CudaLaunchPlan, TargetCtasZeroIsTwoPerSm) {
  EXPECT_EQ(resolve_target_ctas(0, 132), 264);
  EXPECT_EQ(resolve_target_ctas(7, 132), 7);
}

TEST(CudaLaunchPlan, UsersCaseSplitsIntoThreeWithCombine) {
  const Point p{96, 16, 2048, KvDtype::kBf16};
  const LaunchShape s = launch_shape({64, 4, 2, 0}, p, 132);
  EXPECT_EQ(s.split.block_h, 16);
  EXPECT_EQ(s.split.head_groups, 1);
  EXPECT_EQ(s.split.tiles, 32);
  EXPECT_EQ(s.split.nsplit, 3);  // ceil(264 / 96)
  EXPECT_EQ(s.split_grid, 288);
  EXPECT_EQ(s.kernel.block_h, 16);
  EXPECT_EQ(s.split_threads, 128);
  EXPECT_EQ(s.split_smem, smem_layout(64, 4, 2, 16).total);
  EXPECT_TRUE(s.combine);
  EXPECT_EQ(s.combine_grid, 96 * 16);
  EXPECT_EQ(s.combine_threads, 128);  // one split group up to 16 splits
  EXPECT_EQ(s.partial_lse_floats, 96 * 16 * 3);
  EXPECT_EQ(s.partial_o_floats, 96LL * 16 * 3 * 512);
}

TEST(CudaLaunchPlan, OneSplitNeedsNoCombine) {
  const LaunchShape s = launch_shape({32, 8, 2, 96}, {96, 16, 2048, KvDtype::kBf16}, 132);
  EXPECT_EQ(s.split.nsplit, 1);
  EXPECT_FALSE(s.combine);
  EXPECT_EQ(s.combine_grid, 0);
  EXPECT_EQ(s.partial_o_floats, 0);
}

TEST(CudaLaunchPlan, HeadTileHeightFollowsTheHeadsPerCta) {
  auto shape = [](int heads) { return launch_shape({32, 4, 2, 0}, {4, heads, 1000, KvDtype::kBf16}, 132); };
  EXPECT_EQ(shape(8).split.block_h, 8);
  EXPECT_EQ(shape(8).kernel.block_h, 16);  // padded to the MMA's 16 rows
  EXPECT_EQ(shape(16).kernel.block_h, 16);
  EXPECT_EQ(shape(24).kernel.block_h, 32);
  EXPECT_EQ(shape(128).split.head_groups, 4);
  EXPECT_EQ(shape(128).kernel.block_h, 32);
  EXPECT_EQ(shape(40).split.head_groups, 2);  // 32 + 8 heads
  EXPECT_EQ(shape(16).split.tiles, 32);  // ceil(1000 / 32)
}

TEST(CudaLaunchPlan, LongSplitListsGetFourCombineGroups) {
  const LaunchShape s = launch_shape({64, 4, 2, 0}, {1, 16, 2048, KvDtype::kBf16}, 132);
  EXPECT_EQ(s.split.nsplit, 32);
  EXPECT_EQ(s.combine_threads, 512);
  EXPECT_EQ(combine_groups(16), 1);
  EXPECT_EQ(combine_groups(17), 4);
}

TEST(CudaLaunchPlan, SplitFactorIsClampedToTiles) {
  const Point p{1, 16, 64, KvDtype::kBf16};
  EXPECT_EQ(launch_shape({16, 4, 1, 1 << 20}, p, 132).split.nsplit, 4);  // 64 / 16 tiles
  EXPECT_EQ(launch_shape({16, 4, 1, 1}, p, 132).split.nsplit, 1);
}

TEST(CudaLaunchPlan, LaunchShapeRefusesAVariantThatIsNotCompiled) {
  EXPECT_THROW(launch_shape({128, 4, 2, 0}, {1, 16, 2048, KvDtype::kBf16}, 132), std::invalid_argument);
}

TEST(CudaLaunchPlan, InputSetsCoverTwiceTheL2) {
  const long long l2 = 60LL << 20;
  const Point big{96, 16, 2048, KvDtype::kBf16};
  EXPECT_EQ(input_sets_for(big, l2, 0), 2);  // one step alone moves ~230 MB
  const Point one{1, 16, 2048, KvDtype::kBf16};
  const int sets = input_sets_for(one, l2, 0);
  EXPECT_GE(sets * bytes_per_step(one), 2.0 * l2);
  EXPECT_LT((sets - 1) * bytes_per_step(one), 2.0 * l2);
  EXPECT_EQ(input_sets_for(one, l2, 5), 5);
}

TEST(CudaLaunchPlan, StepsAreWholeRotationsLongEnoughForTheTrial) {
  EXPECT_EQ(steps_for(50.0, 20.0, 2, 8192), 400);
  EXPECT_EQ(steps_for(50.0, 20.0, 3, 8192), 402);
  EXPECT_EQ(steps_for(1.0, 20.0, 51, 8192), 8160);  // capped, still whole rotations
  EXPECT_EQ(steps_for(1e6, 20.0, 4, 8192), 4);      // at least one rotation
}

TEST(CudaLaunchPlan, KernelNamesCarryTheShape) {
  EXPECT_EQ(kernel_name({32, 4, 2, 16}), "split_kv<bt32,w4,s2,bh16>");
}

}  // namespace
}  // namespace mla::cuda
