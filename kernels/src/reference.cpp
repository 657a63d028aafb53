#include "mla/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "mla/kv_cache.h"
#include "simd.h"
#include "thread_pool.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // vector helpers are always inlined

namespace mla {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Scores of four heads against one row at a time: each row vector loaded
// feeds four FMAs. Vectors of eight doubles (one AVX-512 register; the
// compiler splits them for narrower ISAs); the sums are reassociated only
// into these fixed lanes, so the result does not depend on the ISA.
typedef double Vd __attribute__((vector_size(8 * sizeof(double))));
constexpr int kLanes = 8;

MLA_INLINE Vd load8(const double* p) {
  Vd v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

MLA_INLINE double hsum8(Vd v) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

template <int H>
MLA_INLINE void scores(const double* q, const double* kv, std::size_t n, double scale, double* score,
                       std::size_t stride) {
  for (std::size_t j = 0; j < n; ++j) {
    const double* k = kv + j * kDimQK;
    Vd acc[H];
    for (int h = 0; h < H; ++h) acc[h] = Vd{};
    for (int d = 0; d < kDimQK; d += kLanes) {
      const Vd kd = load8(k + d);
      for (int h = 0; h < H; ++h) acc[h] += load8(q + h * kDimQK + d) * kd;
    }
    for (int h = 0; h < H; ++h) score[h * stride + j] = scale * hsum8(acc[h]);
  }
}

// P.V of H heads: out[h][:] = sum_j w[h][j] v[j][:], in blocks of 32 values
// held in registers over all rows.
template <int H>
MLA_INLINE void weighted_values(const double* w, const double* kv, std::size_t n, double* out) {
  constexpr int kChunk = 4 * kLanes;
  for (int d0 = 0; d0 < kDimV; d0 += kChunk) {
    Vd acc[H][4];
    for (int h = 0; h < H; ++h)
      for (int c = 0; c < 4; ++c) acc[h][c] = Vd{};
    for (std::size_t j = 0; j < n; ++j) {
      Vd x[4];
      for (int c = 0; c < 4; ++c) x[c] = load8(kv + j * kDimQK + d0 + c * kLanes);
      for (int h = 0; h < H; ++h) {
        const double wj = w[h * n + j];
        for (int c = 0; c < 4; ++c) acc[h][c] += wj * x[c];
      }
    }
    for (int h = 0; h < H; ++h)
      for (int c = 0; c < 4; ++c) std::memcpy(out + h * kDimV + d0 + c * kLanes, &acc[h][c], sizeof(Vd));
  }
}

// Heads [h_begin, h_end) of batch element b, written into ref.
MLA_HOT void reference_heads(const HostInputs& inputs, int b, int h_begin, int h_end, ReferenceOutputs& ref) {
  const Point& p = inputs.point;
  const double scale = static_cast<double>(inputs.softmax_scale);
  const std::int32_t* idx = inputs.indices.data() + static_cast<std::size_t>(b) * p.topk;
  std::vector<std::int32_t> rows;
  for (int j = 0; j < p.topk; ++j)
    if (idx[j] >= 0) rows.push_back(idx[j]);
  if (rows.empty()) return;  // o stays 0, lse -inf
  const std::size_t n = rows.size();

  // The rows, regenerated from the seed: the reference never reads a backend's
  // cache. An fp8 cache's rows are quantised the way the backends store them
  // and dequantised exactly (e4m3 * scale in double).
  std::vector<double> kv(n * kDimQK);
  std::uint8_t fp8_row[kFp8RowBytes];
  for (std::size_t j = 0; j < n; ++j) {
    double* __restrict dst = &kv[j * kDimQK];
    if (p.dtype == KvDtype::kFp8E4m3) {
      kv_fp8_row(inputs.seed, rows[j], fp8_row);
      dequantize_fp8_row(fp8_row, dst);
    } else {
      for (int d = 0; d < kDimQK; ++d) dst[d] = bf16_bits_to_float(kv_element(inputs.seed, rows[j], d));
    }
  }

  const int nh = h_end - h_begin;
  std::vector<double> q(static_cast<std::size_t>(nh) * kDimQK), score(static_cast<std::size_t>(nh) * n);
  for (int h = 0; h < nh; ++h)
    for (int d = 0; d < kDimQK; ++d)
      q[static_cast<std::size_t>(h) * kDimQK + d] =
          bf16_bits_to_float(inputs.q[(static_cast<std::size_t>(b) * p.heads + h_begin + h) * kDimQK + d]);
  int h = 0;
  for (; h + 4 <= nh; h += 4) scores<4>(&q[static_cast<std::size_t>(h) * kDimQK], kv.data(), n, scale, &score[h * n], n);
  for (; h < nh; ++h) scores<1>(&q[static_cast<std::size_t>(h) * kDimQK], kv.data(), n, scale, &score[h * n], n);

  // Softmax weights in place of the scores, then P.V for all heads.
  std::vector<double> m(static_cast<std::size_t>(nh)), sum(static_cast<std::size_t>(nh));
  for (int hh = 0; hh < nh; ++hh) {
    double* row = &score[static_cast<std::size_t>(hh) * n];
    double mx = -kInf;
    for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, row[j]);
    double total = 0;
    for (std::size_t j = 0; j < n; ++j) {
      row[j] = std::exp(row[j] - mx);
      total += row[j];
    }
    m[static_cast<std::size_t>(hh)] = mx;
    sum[static_cast<std::size_t>(hh)] = total;
  }
  std::vector<double> acc(static_cast<std::size_t>(nh) * kDimV);
  h = 0;
  for (; h + 4 <= nh; h += 4) weighted_values<4>(&score[h * n], kv.data(), n, &acc[static_cast<std::size_t>(h) * kDimV]);
  for (; h < nh; ++h) weighted_values<1>(&score[h * n], kv.data(), n, &acc[static_cast<std::size_t>(h) * kDimV]);

  for (int hh = 0; hh < nh; ++hh) {
    const std::size_t bh = static_cast<std::size_t>(b) * p.heads + h_begin + hh;
    double* o = &ref.o[bh * kDimV];
    for (int d = 0; d < kDimV; ++d) o[d] = acc[static_cast<std::size_t>(hh) * kDimV + d] / sum[static_cast<std::size_t>(hh)];
    ref.lse[bh] = m[static_cast<std::size_t>(hh)] + std::log(sum[static_cast<std::size_t>(hh)]);
  }
}

}  // namespace

ReferenceOutputs compute_reference(const HostInputs& inputs, int threads) {
  const Point& p = inputs.point;
  ReferenceOutputs ref;
  ref.point = p;
  ref.o.assign(static_cast<std::size_t>(p.batch) * p.heads * kDimV, 0.0);
  ref.lse.assign(static_cast<std::size_t>(p.batch) * p.heads, -kInf);

  ThreadPool pool(threads);
  // Tasks are (batch element, chunk of heads); a small batch is cut into more
  // head chunks so every thread has work. Each task regenerates its rows.
  const int chunks = std::clamp((2 * pool.size() + p.batch - 1) / p.batch, 1, p.heads);
  const int heads_per_chunk = (p.heads + chunks - 1) / chunks;

  pool.run(static_cast<std::int64_t>(p.batch) * chunks, [&](std::int64_t task, int) {
    const int b = static_cast<int>(task / chunks);
    const int h_begin = static_cast<int>(task % chunks) * heads_per_chunk;
    const int h_end = std::min(p.heads, h_begin + heads_per_chunk);
    if (h_begin < h_end) reference_heads(inputs, b, h_begin, h_end, ref);
  });
  return ref;
}

Comparison compare(const ReferenceOutputs& ref, const CheckOutputs& out, const Tolerance& tolerance) {
  const Point& p = ref.point;
  const std::size_t rows = static_cast<std::size_t>(p.batch) * p.heads;
  Comparison c;
  double err2 = 0, ref2 = 0;
  bool o_nan = false, lse_nan = false;
  double max_lse = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const bool masked = std::isinf(ref.lse[r]);
    bool row_wrong = false;
    for (int d = 0; d < kDimV; ++d) {
      const double got = bf16_bits_to_float(out.o[r * kDimV + d]);
      const double want = ref.o[r * kDimV + d];
      if (std::isnan(got)) {
        o_nan = true;
        ++c.nonfinite;
        continue;
      }
      if (std::isinf(got)) ++c.nonfinite;
      if (masked && got != 0) row_wrong = true;
      err2 += (got - want) * (got - want);
      ref2 += want * want;
    }
    const double lse = out.lse[r];
    if (std::isnan(lse)) {
      ++c.nonfinite;
      if (!masked) lse_nan = true;
    } else if (masked) {
      if (!(std::isinf(lse) && lse < 0)) row_wrong = true;
    } else if (std::isinf(lse)) {
      ++c.nonfinite;
      max_lse = kInf;
    } else {
      max_lse = std::max(max_lse, std::abs(lse - ref.lse[r]));
    }
    if (row_wrong) ++c.masked_rows_wrong;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.rel_l2_o = o_nan ? nan : (ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  c.max_abs_lse = lse_nan ? nan : max_lse;

  char text[200];
  if (c.nonfinite > 0) {
    std::snprintf(text, sizeof text, "%lld outputs are NaN or infinite (poison left unwritten, or computed)",
                  c.nonfinite);
    c.reason = text;
  } else if (!(c.rel_l2_o <= tolerance.max_rel_l2_o)) {
    std::snprintf(text, sizeof text, "rel_l2_o %.3g exceeds the tolerance %.3g", c.rel_l2_o, tolerance.max_rel_l2_o);
    c.reason = text;
  } else if (!(c.max_abs_lse <= tolerance.max_abs_lse)) {
    std::snprintf(text, sizeof text, "max_abs_lse %.3g exceeds the tolerance %.3g", c.max_abs_lse,
                  tolerance.max_abs_lse);
    c.reason = text;
  } else if (c.masked_rows_wrong > 0) {
    std::snprintf(text, sizeof text, "%lld fully masked rows do not have o = 0 and lse = -inf", c.masked_rows_wrong);
    c.reason = text;
  }
  c.passed = c.reason.empty();
  return c;
}

}  // namespace mla
