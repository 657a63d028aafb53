#include "mla/problem.h"

#include <gtest/gtest.h>

namespace mla {
namespace {

Point shape(int batch, int heads, int topk) {
  Point p;
  p.batch = batch;
  p.heads = heads;
  p.topk = topk;
  return p;
}

TEST(PlanSplit, SingleBatchElementSplitsUpToOneTilePerSplit) {
  // 264 CTAs wanted, 1 x 1 (b, head group): 264 splits, clamped to the 64 tiles.
  const SplitPlan plan = plan_split(shape(1, 16, 2048), 32, 264);
  EXPECT_EQ(plan.block_h, 16);
  EXPECT_EQ(plan.head_groups, 1);
  EXPECT_EQ(plan.tiles, 64);
  EXPECT_EQ(plan.nsplit, 64);
  EXPECT_EQ(plan.ctas, 64);
}

TEST(PlanSplit, LargeBatchNeedsFewSplits) {
  // ceil(264 / 96) = 3.
  const SplitPlan plan = plan_split(shape(96, 16, 2048), 32, 264);
  EXPECT_EQ(plan.nsplit, 3);
  EXPECT_EQ(plan.ctas, 288);
  // ceil(264 / 48) = 6; ceil(264 / 8) = 33.
  EXPECT_EQ(plan_split(shape(48, 16, 2048), 32, 264).nsplit, 6);
  EXPECT_EQ(plan_split(shape(8, 16, 2048), 32, 264).nsplit, 33);
}

TEST(PlanSplit, ManyHeadsMakeHeadGroupsOf32) {
  // H = 128: block_h 32, 4 groups; 8 x 4 = 32 per split, ceil(264 / 32) = 9.
  const SplitPlan plan = plan_split(shape(8, 128, 2048), 64, 264);
  EXPECT_EQ(plan.block_h, 32);
  EXPECT_EQ(plan.head_groups, 4);
  EXPECT_EQ(plan.tiles, 32);
  EXPECT_EQ(plan.nsplit, 9);
  EXPECT_EQ(plan.ctas, 8 * 4 * 9);
  // 40 heads: 32 + 8.
  EXPECT_EQ(plan_split(shape(1, 40, 64), 16, 1).head_groups, 2);
  EXPECT_EQ(plan_split(shape(1, 3, 64), 16, 1).block_h, 3);
}

TEST(PlanSplit, ClampsToOneSplitAndCountsPartialTiles) {
  const SplitPlan plan = plan_split(shape(4, 16, 100), 32, 1);
  EXPECT_EQ(plan.tiles, 4);  // 32 + 32 + 32 + 4
  EXPECT_EQ(plan.nsplit, 1);
  EXPECT_EQ(plan_split(shape(1, 16, 1), 64, 1 << 20).nsplit, 1);  // one tile: one split
}

TEST(SplitTiles, DealsTilesEvenlyWithNoEmptySplit) {
  SplitPlan plan;
  plan.tiles = 10;
  plan.nsplit = 3;
  EXPECT_EQ(split_tiles(plan, 0).first, 0);
  EXPECT_EQ(split_tiles(plan, 0).last, 3);
  EXPECT_EQ(split_tiles(plan, 1).first, 3);
  EXPECT_EQ(split_tiles(plan, 1).last, 6);
  EXPECT_EQ(split_tiles(plan, 2).first, 6);
  EXPECT_EQ(split_tiles(plan, 2).last, 10);

  for (int tiles = 1; tiles <= 40; ++tiles) {
    for (int nsplit = 1; nsplit <= tiles; ++nsplit) {
      plan.tiles = tiles;
      plan.nsplit = nsplit;
      int next = 0;
      for (int s = 0; s < nsplit; ++s) {
        const TileRange r = split_tiles(plan, s);
        ASSERT_EQ(r.first, next) << tiles << " tiles, " << nsplit << " splits, split " << s;
        ASSERT_GT(r.last, r.first) << tiles << " tiles, " << nsplit << " splits, split " << s;
        ASSERT_LE(r.last - r.first, (tiles + nsplit - 1) / nsplit);
        next = r.last;
      }
      ASSERT_EQ(next, tiles);
    }
  }
}

TEST(Problem, BytesAndFlopsPerStep) {
  const Point p = shape(1, 16, 2048);
  // KV rows 2048 * 1152, q 16 * 1152, o 16 * 1024, lse 16 * 4, indices 2048 * 4.
  EXPECT_DOUBLE_EQ(bytes_per_step(p), 2359296.0 + 18432 + 16384 + 64 + 8192);
  EXPECT_DOUBLE_EQ(flops_per_step(p), 2.0 * 16 * 2048 * 1088);
  EXPECT_DOUBLE_EQ(flops_per_step(shape(96, 16, 2048)), 96 * flops_per_step(p));
  EXPECT_EQ(kv_row_bytes(KvDtype::kBf16), 1152);
  EXPECT_EQ(kv_row_bytes(KvDtype::kFp8E4m3), 656);  // FlashMLA's row: 512 + 4 * 4 + 64 * 2
  // fp8 at B 96: rows of 656 bytes instead of 1152, the rest unchanged.
  Point fp8 = shape(96, 16, 2048);
  fp8.dtype = KvDtype::kFp8E4m3;
  EXPECT_DOUBLE_EQ(bytes_per_step(shape(96, 16, 2048)) - bytes_per_step(fp8), 96.0 * 2048 * (1152 - 656));
  EXPECT_DOUBLE_EQ(flops_per_step(fp8), flops_per_step(shape(96, 16, 2048)));
}

TEST(Problem, DtypeNamesRoundTrip) {
  for (KvDtype d : {KvDtype::kBf16, KvDtype::kFp8E4m3}) {
    KvDtype parsed = d == KvDtype::kBf16 ? KvDtype::kFp8E4m3 : KvDtype::kBf16;
    ASSERT_TRUE(parse_kv_dtype(to_string(d), &parsed));
    EXPECT_EQ(parsed, d);
  }
  KvDtype unchanged = KvDtype::kBf16;
  EXPECT_FALSE(parse_kv_dtype("fp16", &unchanged));
  EXPECT_STREQ(to_string(KvDtype::kFp8E4m3), "fp8");
  // Issue 14's word and the v1 schema's both name the fp8 cache.
  KvDtype alias = KvDtype::kBf16;
  ASSERT_TRUE(parse_kv_dtype("fp8_e4m3", &alias));
  EXPECT_EQ(alias, KvDtype::kFp8E4m3);
}

}  // namespace
}  // namespace mla
