// What one row of the KV cache holds, for each cache dtype, and how the fp8
// rows are made from the generated values.
//
//   bf16: 576 bf16 values (512 latent, 64 rope): 1152 bytes.
//   fp8:  FlashMLA's 656-byte layout (DeepSeek-V3.2 sparse attention):
//           bytes [0, 512)    the 512 latent values as fp8 e4m3 (OCP "fn": no
//                             infinity, largest finite 448, 0x7F/0xFF NaN);
//           bytes [512, 528)  four fp32 scales, one per 128 latent values;
//           bytes [528, 656)  the 64 rope values as bf16, not quantised.
//         latent value d of the row = e4m3_to_float(byte d) * scale[d / 128].
//
// The fp8 row of (seed, row) quantises the bf16 values kv_element(seed, row, d)
// block by block: scale = amax / 448 (1 for an all-zero block), byte =
// float_to_e4m3(value / scale), round to nearest even, saturating at 448.
// Everything here is integer or correctly rounded float arithmetic, so the
// host and the device produce the same bytes; the float64 reference reads
// the dequantised values (dequantize_fp8_row), the cache the kernels read.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "mla/inputs.h"
#include "mla/problem.h"

namespace mla {

inline constexpr int kFp8BlockValues = 128;                      // latent values sharing a scale
inline constexpr int kFp8Blocks = kDimLatent / kFp8BlockValues;  // 4
inline constexpr int kFp8ScaleOffset = kDimLatent;               // bytes
inline constexpr int kFp8RopeOffset = kFp8ScaleOffset + 4 * kFp8Blocks;  // 528
inline constexpr int kFp8RowBytes = kFp8RopeOffset + 2 * kDimRope;       // 656
inline constexpr float kE4m3Max = 448.0f;

MLA_HD inline std::uint32_t mla_float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

MLA_HD inline float mla_bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// e4m3 bits -> float, exactly (every e4m3 value is a float).
MLA_HD inline float e4m3_to_float(std::uint8_t b) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  const std::uint32_t e = (b >> 3) & 0xFu, m = b & 7u;
  if (e == 15 && m == 7) return mla_bits_float(sign | 0x7FC00000u);  // NaN
  if (e == 0) {
    const float v = static_cast<float>(m) * 0.001953125f;  // m * 2^-9, exact
    return sign ? -v : v;
  }
  return mla_bits_float(sign | ((e + 120u) << 23) | (m << 20));
}

// float -> e4m3 bits, round to nearest even, saturating at +-448; NaN -> 0x7F.
MLA_HD inline std::uint8_t float_to_e4m3(float x) {
  std::uint32_t u = mla_float_bits(x);
  const std::uint8_t sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
  u &= 0x7FFFFFFFu;
  if (u > 0x7F800000u) return static_cast<std::uint8_t>(sign | 0x7Fu);
  const float a = mla_bits_float(u);
  if (a >= kE4m3Max) return static_cast<std::uint8_t>(sign | 0x7Eu);  // [448, 464) rounds to 448; beyond saturates
  if (a < 0.015625f) {
    // Subnormal range, units of 2^-9: a * 512 is exact, rintf rounds half to even
    // (the default rounding mode on the host; cvt.rni on the device). 8 is 2^-6, code 0x08.
    return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(rintf(a * 512.0f)));
  }
  // Normal: keep 3 mantissa bits, half to even; a carry moves into the exponent.
  const std::uint32_t r = (u + 0x7FFFFu + ((u >> 20) & 1u)) >> 20;  // (E + 127) << 3 | m
  return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(r - (120u << 3)));
}

// The scale of one block from its largest magnitude.
MLA_HD inline float fp8_block_scale(float amax) { return amax > 0.0f ? amax / kE4m3Max : 1.0f; }

// Block `block` (0..3) of the fp8 row of (seed, row): its 128 bytes and its scale.
MLA_HD inline float kv_fp8_block(std::uint64_t seed, std::int64_t row, int block, std::uint8_t* out) {
  float amax = 0.0f;
  for (int i = 0; i < kFp8BlockValues; ++i) {
    const float v = bf16_bits_to_float(kv_element(seed, row, block * kFp8BlockValues + i));
    amax = fmaxf(amax, fabsf(v));
  }
  const float scale = fp8_block_scale(amax);
  for (int i = 0; i < kFp8BlockValues; ++i) {
    const float v = bf16_bits_to_float(kv_element(seed, row, block * kFp8BlockValues + i));
    out[i] = float_to_e4m3(v / scale);
  }
  return scale;
}

// The whole 656-byte fp8 row of (seed, row).
MLA_HD inline void kv_fp8_row(std::uint64_t seed, std::int64_t row, std::uint8_t* out) {
  for (int blk = 0; blk < kFp8Blocks; ++blk) {
    const float scale = kv_fp8_block(seed, row, blk, out + blk * kFp8BlockValues);
    const std::uint32_t bits = mla_float_bits(scale);
    for (int j = 0; j < 4; ++j) out[kFp8ScaleOffset + 4 * blk + j] = static_cast<std::uint8_t>(bits >> (8 * j));
  }
  for (int d = 0; d < kDimRope; ++d) {
    const std::uint16_t v = kv_element(seed, row, kDimLatent + d);
    out[kFp8RopeOffset + 2 * d] = static_cast<std::uint8_t>(v & 0xFFu);
    out[kFp8RopeOffset + 2 * d + 1] = static_cast<std::uint8_t>(v >> 8);
  }
}

// Scale `block` of an fp8 row (little-endian fp32, as the device stores it).
MLA_HD inline float fp8_row_scale(const std::uint8_t* row, int block) {
  std::uint32_t bits = 0;
  for (int j = 0; j < 4; ++j) bits |= static_cast<std::uint32_t>(row[kFp8ScaleOffset + 4 * block + j]) << (8 * j);
  return mla_bits_float(bits);
}

// The 576 values an fp8 row stands for: latent = e4m3 * scale, rope = the
// bf16 values. In float (one rounded multiply, as the kernels do it) or in
// double (exact: the reference's dequantised cache).
template <typename T>
inline void dequantize_fp8_row(const std::uint8_t* row, T* out) {
  T scale[kFp8Blocks];
  for (int blk = 0; blk < kFp8Blocks; ++blk) scale[blk] = static_cast<T>(fp8_row_scale(row, blk));
  for (int d = 0; d < kDimLatent; ++d) out[d] = static_cast<T>(e4m3_to_float(row[d])) * scale[d / kFp8BlockValues];
  for (int d = 0; d < kDimRope; ++d) {
    const auto v = static_cast<std::uint16_t>(row[kFp8RopeOffset + 2 * d] | (row[kFp8RopeOffset + 2 * d + 1] << 8));
    out[kDimLatent + d] = static_cast<T>(bf16_bits_to_float(v));
  }
}

}  // namespace mla
