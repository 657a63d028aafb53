// The fp8 KV cache format (mla/kv_cache.h): e4m3 conversions against values
// worked out by hand, and the 656-byte row against the bf16 values it holds.
#include "mla/kv_cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace mla {
namespace {

TEST(E4m3, DecodesByHand) {
  EXPECT_EQ(e4m3_to_float(0x00), 0.0f);
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);          // e = 7, m = 0
  EXPECT_EQ(e4m3_to_float(0x3C), 1.5f);          // e = 7, m = 4
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);        // largest finite
  EXPECT_EQ(e4m3_to_float(0xFE), -448.0f);
  EXPECT_EQ(e4m3_to_float(0x08), 0.015625f);     // smallest normal, 2^-6
  EXPECT_EQ(e4m3_to_float(0x01), 0.001953125f);  // smallest subnormal, 2^-9
  EXPECT_EQ(e4m3_to_float(0x07), 7 * 0.001953125f);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xFF)));
}

TEST(E4m3, EveryFiniteCodeRoundTrips) {
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;  // NaN
    const float v = e4m3_to_float(static_cast<std::uint8_t>(b));
    const std::uint8_t back = float_to_e4m3(v);
    if (b == 0x80) {
      EXPECT_EQ(back, 0x80);  // -0 keeps its sign
    } else {
      EXPECT_EQ(back, b) << "code " << b << " value " << v;
    }
  }
}

TEST(E4m3, RoundsToNearestEvenAndSaturates) {
  // Between 1 (0x38) and 1.125 (0x39): the midpoint goes to the even code.
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);
  EXPECT_EQ(float_to_e4m3(1.0626f), 0x39);
  // Between 1.125 (0x39) and 1.25 (0x3A): the midpoint goes to 0x3A.
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3A);
  // 1.9375 is halfway between 1.875 (0x3F) and 2 (0x40): the carry reaches the exponent.
  EXPECT_EQ(float_to_e4m3(1.9375f), 0x40);
  // Subnormals: 2.5 * 2^-9 -> 2 * 2^-9 (even), 3.5 * 2^-9 -> 4 * 2^-9.
  EXPECT_EQ(float_to_e4m3(2.5f * 0.001953125f), 0x02);
  EXPECT_EQ(float_to_e4m3(3.5f * 0.001953125f), 0x04);
  // 7.5 * 2^-9 rounds to 8 * 2^-9 = 2^-6, the smallest normal.
  EXPECT_EQ(float_to_e4m3(7.5f * 0.001953125f), 0x08);
  EXPECT_EQ(float_to_e4m3(-1.0f), 0xB8);
  EXPECT_EQ(float_to_e4m3(460.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(1e30f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-1e30f), 0xFE);
  EXPECT_EQ(float_to_e4m3(__builtin_inff()), 0x7E);
  EXPECT_EQ(float_to_e4m3(__builtin_nanf("")), 0x7F);
}

TEST(Fp8Row, HoldsTheBf16ValuesToE4m3Precision) {
  constexpr std::uint64_t kSeed = 12345;
  std::vector<std::uint8_t> row(kFp8RowBytes);
  std::vector<double> values(kDimQK);
  for (std::int64_t r : {0LL, 1LL, 777LL, 123456789LL}) {
    kv_fp8_row(kSeed, r, row.data());
    dequantize_fp8_row(row.data(), values.data());
    for (int blk = 0; blk < kFp8Blocks; ++blk) {
      float amax = 0;
      for (int i = 0; i < kFp8BlockValues; ++i)
        amax = std::max(amax, std::fabs(bf16_bits_to_float(kv_element(kSeed, r, blk * kFp8BlockValues + i))));
      EXPECT_EQ(fp8_row_scale(row.data(), blk), amax / 448.0f) << "row " << r << " block " << blk;
      bool hit_max = false;
      for (int i = 0; i < kFp8BlockValues; ++i) {
        const int d = blk * kFp8BlockValues + i;
        const double want = bf16_bits_to_float(kv_element(kSeed, r, d));
        // Half a unit of e4m3's last place: 2^-4 relative for normals, and
        // the subnormal step 2^-9 * scale near zero.
        const double tol = std::max(std::fabs(want) / 16.0, 0.5 * 0.001953125 * amax / 448.0) * (1 + 1e-6);
        EXPECT_LE(std::fabs(values[d] - want), tol) << "row " << r << " column " << d;
        hit_max = hit_max || (row[d] & 0x7F) == 0x7E;
      }
      EXPECT_TRUE(hit_max) << "the block's largest value maps to 448";
    }
    for (int d = kDimLatent; d < kDimQK; ++d)
      EXPECT_EQ(values[d], bf16_bits_to_float(kv_element(kSeed, r, d))) << "rope is kept as bf16";
  }
}

TEST(Fp8Row, FloatDequantisationIsOneRoundedMultiply) {
  std::vector<std::uint8_t> row(kFp8RowBytes);
  kv_fp8_row(9, 42, row.data());
  std::vector<float> f(kDimQK);
  std::vector<double> d(kDimQK);
  dequantize_fp8_row(row.data(), f.data());
  dequantize_fp8_row(row.data(), d.data());
  for (int i = 0; i < kDimQK; ++i) EXPECT_EQ(f[i], static_cast<float>(d[i])) << i;
}

TEST(Fp8Row, AnAllZeroBlockGetsScaleOne) {
  EXPECT_EQ(fp8_block_scale(0.0f), 1.0f);
  EXPECT_EQ(fp8_block_scale(448.0f), 1.0f);
  EXPECT_EQ(fp8_block_scale(4.48f), 4.48f / 448.0f);
}

}  // namespace
}  // namespace mla
