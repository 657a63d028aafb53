#include "mla/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "simd.h"
#include "thread_pool.h"

namespace mla {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Eight independent partial sums: the compiler may vectorise this without
// reassociating one long chain (which -O3 alone does not allow).
MLA_INLINE double dot576(const double* a, const double* b) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int d = 0; d < kDimQK; d += 8)
    for (int i = 0; i < 8; ++i) s[i] += a[d + i] * b[d + i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
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

  // The rows, regenerated from the seed: the reference never reads a backend's cache.
  std::vector<double> kv(n * kDimQK);
  for (std::size_t j = 0; j < n; ++j) {
    double* __restrict dst = &kv[j * kDimQK];
    for (int d = 0; d < kDimQK; ++d) dst[d] = bf16_bits_to_float(kv_element(inputs.seed, rows[j], d));
  }

  std::vector<double> q(kDimQK), score(n), acc(kDimV);
  for (int h = h_begin; h < h_end; ++h) {
    const std::size_t bh = static_cast<std::size_t>(b) * p.heads + h;
    for (int d = 0; d < kDimQK; ++d) q[d] = bf16_bits_to_float(inputs.q[bh * kDimQK + d]);
    double m = -kInf;
    for (std::size_t j = 0; j < n; ++j) {
      score[j] = scale * dot576(q.data(), &kv[j * kDimQK]);
      m = std::max(m, score[j]);
    }
    double sum = 0;
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::size_t j = 0; j < n; ++j) {
      const double w = std::exp(score[j] - m);
      sum += w;
      const double* __restrict v = &kv[j * kDimQK];  // the value is the row's latent part
      double* __restrict a = acc.data();
      for (int d = 0; d < kDimV; ++d) a[d] += w * v[d];
    }
    double* o = &ref.o[bh * kDimV];
    for (int d = 0; d < kDimV; ++d) o[d] = acc[d] / sum;
    ref.lse[bh] = m + std::log(sum);
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
