#include "mla/inputs.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace mla {
namespace {

Point shape(int batch, int heads, int topk) {
  Point p;
  p.batch = batch;
  p.heads = heads;
  p.topk = topk;
  return p;
}

TEST(Bf16, RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_FLOAT_EQ(bf16_bits_to_float(0x3F80), 1.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1.0p-8f), 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1.0p-8f), 0x3F82);
  EXPECT_EQ(float_to_bf16_bits(__builtin_nanf("")), 0x7FC0);
}

TEST(Inputs, IndicesAreDistinctAndInTheirOwnRegion) {
  const Point p = shape(6, 4, 500);
  const CacheLayout layout{3, 6, 1000};
  for (int set = 0; set <= layout.sets; ++set) {
    const HostInputs in = make_inputs(p, layout, 42, set, 0.0, 0.07f);
    ASSERT_EQ(in.indices.size(), 6u * 500);
    ASSERT_EQ(in.q.size(), 6u * 4 * kDimQK);
    for (int b = 0; b < p.batch; ++b) {
      std::set<int> seen;
      for (int j = 0; j < p.topk; ++j) {
        const int idx = in.indices[static_cast<std::size_t>(b) * p.topk + j];
        ASSERT_GE(idx, layout.region_base(set, b));
        ASSERT_LT(idx, layout.region_base(set, b) + layout.context_rows);
        seen.insert(idx);
      }
      EXPECT_EQ(seen.size(), static_cast<std::size_t>(p.topk)) << "set " << set << " b " << b;
    }
  }
}

TEST(Inputs, AreDeterministicAndDifferBetweenSets) {
  const Point p = shape(3, 2, 64);
  const CacheLayout layout{2, 3, 256};
  const HostInputs a = make_inputs(p, layout, 7, 1, 0.1, 0.07f);
  const HostInputs b = make_inputs(p, layout, 7, 1, 0.1, 0.07f);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.indices, b.indices);
  const HostInputs other_set = make_inputs(p, layout, 7, 0, 0.1, 0.07f);
  EXPECT_NE(a.q, other_set.q);
  const HostInputs other_seed = make_inputs(p, layout, 8, 1, 0.1, 0.07f);
  EXPECT_NE(a.q, other_seed.q);
  EXPECT_NE(a.indices, other_seed.indices);
  EXPECT_EQ(kv_element(7, 12345, 17), kv_element(7, 12345, 17));
}

TEST(Inputs, ValuesLookNormalAndAreNeverZeroFilled) {
  const Point p = shape(4, 16, 8);
  const HostInputs in = make_inputs(p, CacheLayout{1, 4, 64}, 3, 0, 0.0, 0.07f);
  double sum = 0, sum2 = 0;
  int zeros = 0;
  for (std::uint16_t bits : in.q) {
    const double x = bf16_bits_to_float(bits);
    sum += x;
    sum2 += x * x;
    zeros += x == 0;
  }
  const double n = static_cast<double>(in.q.size());
  EXPECT_NEAR(sum / n, 0.0, 0.05);
  EXPECT_NEAR(sum2 / n, 1.0, 0.05);
  EXPECT_LT(zeros, 5);
}

TEST(Inputs, CheckSetMasksRandomlyTailAndEntirely) {
  const Point p = shape(8, 2, 1000);
  const CacheLayout layout{2, 8, 4000};
  const HostInputs in = make_inputs(p, layout, 11, layout.check_set(), 0.25, 0.07f);
  auto at = [&](int b, int j) { return in.indices[static_cast<std::size_t>(b) * p.topk + j]; };
  // Element 1: a short sequence, valid for topk / 3 + 1 slots.
  for (int j = 0; j < p.topk; ++j) EXPECT_EQ(at(1, j) < 0, j >= p.topk / 3 + 1) << j;
  // Element 2: nothing to attend to.
  for (int j = 0; j < p.topk; ++j) EXPECT_EQ(at(2, j), -1);
  // The others: about a quarter masked.
  int masked = 0, total = 0;
  for (int b : {0, 3, 4, 5, 6, 7})
    for (int j = 0; j < p.topk; ++j, ++total) masked += at(b, j) < 0;
  EXPECT_NEAR(static_cast<double>(masked) / total, 0.25, 0.03);

  const HostInputs unmasked = make_inputs(p, layout, 11, 0, 0.0, 0.07f);
  for (std::int32_t idx : unmasked.indices) ASSERT_GE(idx, 0);
}

TEST(Inputs, RefusesAContextTooSmallForDistinctIndices) {
  EXPECT_THROW(make_inputs(shape(1, 1, 100), CacheLayout{1, 1, 50}, 1, 0, 0.0, 0.07f), std::invalid_argument);
  EXPECT_THROW(make_inputs(shape(2, 1, 10), CacheLayout{1, 1, 50}, 1, 0, 0.0, 0.07f), std::invalid_argument);
}

}  // namespace
}  // namespace mla
