// The hot loops of one tile of the CPU split-KV step, written once over a
// vector width L (floats per vector) and register-block shapes, so that each
// instruction set gets blocks that fit its registers:
//
//   scores  S[h][j] = scale * q[h].k[j]   in blocks of SH heads x SJ tokens:
//           SH + SJ vector loads feed SH * SJ FMAs (the naive loop does 2 per FMA)
//   P.V     acc[h][:] = alpha[h] * acc[h][:] + sum_j p[h][j] v[j][:]
//           in blocks of PH heads x PD vectors held in registers over the tile
//
// Internal to the CPU backend; GCC/Clang vector extensions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "mla/kv_cache.h"
#include "mla/problem.h"
#include "simd.h"

// The vector helpers are always inlined into the per-ISA kernels, so the
// ABI of passing wide vectors between functions never arises.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace mla::cpu {

struct TileArgs {
  const std::uint8_t* kv;    // the cache's first row (rows of kv_row_bytes(dtype))
  KvDtype dtype;
  const float* e4m3;         // fp8: e4m3 byte -> float, 256 entries
  const std::int32_t* idx;   // the tile's indices (-1 = masked)
  int count;                 // tokens in the tile (< block_t for the last one)
  const float* q;            // [nh, 576] the group's q as float
  int nh;                    // heads in the group
  float scale;
  float* k;                  // [block_t, 576] scratch: the gathered rows as float
  float* s;                  // [nh, s_stride] scratch: scores, then probabilities
  int s_stride;              // >= count
  float* alpha;              // [nh] scratch: rescale factor of this tile
  float* m;                  // [nh] running max
  float* l;                  // [nh] running sum
  float* acc;                // [nh, 512] running P.V, unnormalised
};

template <int L>
struct Vec {
  typedef float type __attribute__((vector_size(L * sizeof(float))));
};

template <int L>
MLA_INLINE typename Vec<L>::type vload(const float* p) {
  typename Vec<L>::type v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <int L>
MLA_INLINE void vstore(float* p, typename Vec<L>::type v) {
  std::memcpy(p, &v, sizeof v);
}

// Sum of the lanes by halving: log2(L) vector adds instead of L scalar ones.
template <int L>
MLA_INLINE float hsum(typename Vec<L>::type v) {
  if constexpr (L == 1) {
    return v[0];
  } else {
    typename Vec<L / 2>::type lo, hi;
    std::memcpy(&lo, &v, sizeof lo);
    std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    return hsum<L / 2>(lo + hi);
  }
}

template <int L, int SH, int SJ>
MLA_INLINE void score_block(const float* q, const float* k, float scale, float* s, int ss) {
  using V = typename Vec<L>::type;
  V acc[SH][SJ];
  for (int h = 0; h < SH; ++h)
    for (int j = 0; j < SJ; ++j) acc[h][j] = V{};
  for (int d = 0; d < kDimQK; d += L) {
    V kv[SJ];
    for (int j = 0; j < SJ; ++j) kv[j] = vload<L>(k + j * kDimQK + d);
    for (int h = 0; h < SH; ++h) {
      const V qv = vload<L>(q + h * kDimQK + d);
      for (int j = 0; j < SJ; ++j) acc[h][j] += qv * kv[j];
    }
  }
  for (int h = 0; h < SH; ++h)
    for (int j = 0; j < SJ; ++j) s[h * ss + j] = scale * hsum<L>(acc[h][j]);
}

// Heads [h, h + SH) against every token. (No lambdas here: a lambda is not
// always_inline and would be compiled for the baseline ISA.)
template <int L, int SH, int SJ>
MLA_INLINE void score_rows(const float* q, int h, const float* k, int n, float scale, float* s, int ss) {
  int j = 0;
  for (; j + SJ <= n; j += SJ) score_block<L, SH, SJ>(q + h * kDimQK, k + j * kDimQK, scale, s + h * ss + j, ss);
  for (; j < n; ++j) score_block<L, SH, 1>(q + h * kDimQK, k + j * kDimQK, scale, s + h * ss + j, ss);
}

template <int L, int SH, int SJ>
MLA_INLINE void scores(const float* q, int nh, const float* k, int n, float scale, float* s, int ss) {
  int h = 0;
  for (; h + SH <= nh; h += SH) score_rows<L, SH, SJ>(q, h, k, n, scale, s, ss);
  for (; h < nh; ++h) score_rows<L, 1, SJ>(q, h, k, n, scale, s, ss);
}

template <int L, int PH, int PD>
MLA_INLINE void pv_block(const float* p, int ss, const float* alpha, const float* v, int n, float* acc) {
  using V = typename Vec<L>::type;
  V a[PH][PD];
  for (int h = 0; h < PH; ++h)
    for (int c = 0; c < PD; ++c) a[h][c] = vload<L>(acc + h * kDimV + c * L) * alpha[h];
  for (int j = 0; j < n; ++j) {
    V x[PD];
    for (int c = 0; c < PD; ++c) x[c] = vload<L>(v + j * kDimQK + c * L);
    for (int h = 0; h < PH; ++h) {
      const float w = p[h * ss + j];
      for (int c = 0; c < PD; ++c) a[h][c] += w * x[c];
    }
  }
  for (int h = 0; h < PH; ++h)
    for (int c = 0; c < PD; ++c) vstore<L>(acc + h * kDimV + c * L, a[h][c]);
}

template <int L, int PH, int PD>
MLA_INLINE void pv(const float* s, int ss, const float* alpha, int nh, const float* k, int n, float* acc) {
  constexpr int kChunk = L * PD;
  static_assert(kDimV % kChunk == 0, "a P.V block must tile the 512 value dimensions");
  int h = 0;
  for (; h + PH <= nh; h += PH)
    for (int d = 0; d < kDimV; d += kChunk)
      pv_block<L, PH, PD>(s + h * ss, ss, alpha + h, k + d, n, acc + h * kDimV + d);
  for (; h < nh; ++h)
    for (int d = 0; d < kDimV; d += kChunk) pv_block<L, 1, PD>(s + h * ss, ss, alpha + h, k + d, n, acc + h * kDimV + d);
}

// One fp8 row (mla/kv_cache.h) as float: latent = e4m3 * its block's scale
// (one float multiply, as dequantize_fp8_row<float>), rope = bf16.
MLA_INLINE void gather_fp8_row(const std::uint8_t* __restrict src, const float* __restrict e4m3, float* __restrict dst) {
  for (int blk = 0; blk < kFp8Blocks; ++blk) {
    float scale;
    std::memcpy(&scale, src + kFp8ScaleOffset + 4 * blk, sizeof scale);
    for (int i = 0; i < kFp8BlockValues; ++i)
      dst[blk * kFp8BlockValues + i] = e4m3[src[blk * kFp8BlockValues + i]] * scale;
  }
  for (int d = 0; d < kDimRope; ++d) {
    const std::uint32_t bits = static_cast<std::uint32_t>(src[kFp8RopeOffset + 2 * d] |
                                                          (src[kFp8RopeOffset + 2 * d + 1] << 8)) << 16;
    std::memcpy(dst + kDimLatent + d, &bits, sizeof bits);
  }
}

// One tile: gather its valid rows (bf16 or fp8 -> float once, shared by the
// group's heads), then the online-softmax update of every head.
template <int L, int SH, int SJ, int PH, int PD>
MLA_INLINE void tile_update_impl(const TileArgs& t) {
  static_assert(kDimQK % L == 0, "vectors must tile a row");
  const std::int64_t row_bytes = kv_row_bytes(t.dtype);
  int n = 0;
  for (int j = 0; j < t.count; ++j) {
    if (t.idx[j] < 0) continue;  // masked: skipped, not gathered
    const std::uint8_t* __restrict row = t.kv + static_cast<std::int64_t>(t.idx[j]) * row_bytes;
    float* __restrict dst = t.k + static_cast<std::int64_t>(n) * kDimQK;
    if (t.dtype == KvDtype::kFp8E4m3) {
      gather_fp8_row(row, t.e4m3, dst);
    } else {
      const std::uint16_t* __restrict src = reinterpret_cast<const std::uint16_t*>(row);
      for (int d = 0; d < kDimQK; ++d) {
        const std::uint32_t bits = static_cast<std::uint32_t>(src[d]) << 16;
        std::memcpy(dst + d, &bits, sizeof bits);
      }
    }
    ++n;
  }
  if (n == 0) return;

  scores<L, SH, SJ>(t.q, t.nh, t.k, n, t.scale, t.s, t.s_stride);
  for (int h = 0; h < t.nh; ++h) {
    float* row = t.s + h * t.s_stride;
    float mx = t.m[h];
    for (int j = 0; j < n; ++j) mx = std::max(mx, row[j]);
    // m = -inf before the first valid token: alpha = exp(-inf) = 0.
    t.alpha[h] = std::exp(t.m[h] - mx);
    float sum = 0;
    for (int j = 0; j < n; ++j) {
      row[j] = std::exp(row[j] - mx);
      sum += row[j];
    }
    t.l[h] = t.l[h] * t.alpha[h] + sum;
    t.m[h] = mx;
  }
  pv<L, PH, PD>(t.s, t.s_stride, t.alpha, t.nh, t.k, n, t.acc);
}

}  // namespace mla::cpu

#pragma GCC diagnostic pop
