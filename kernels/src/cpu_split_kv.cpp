#include "cpu_split_kv.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "mla/inputs.h"

// The bench binary travels between machines, so it is built for the baseline
// ISA; the hot loops are cloned for AVX2+FMA and AVX-512 and picked at load
// time by the CPU they run on (GCC's function multiversioning).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(MLA_NO_CLONES)
#define MLA_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define MLA_HAVE_CLONES 1
#else
#define MLA_HOT
#define MLA_HAVE_CLONES 0
#endif

namespace mla::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int kLanes = 16;  // independent partial sums: one AVX-512 vector, two AVX2, four SSE

inline float dot576(const float* __restrict a, const float* __restrict b) {
  float s[kLanes] = {};
  for (int d = 0; d < kDimQK; d += kLanes)
    for (int i = 0; i < kLanes; ++i) s[i] += a[d + i] * b[d + i];
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int i = 0; i < w; ++i) s[i] += s[i + w];
  return s[0];
}

// One tile: gather its valid rows, then the online-softmax update of every
// head of the group. Returns nothing; m, l, acc carry the state.
MLA_HOT void tile_update(const std::uint16_t* __restrict kv, const std::int32_t* __restrict idx, int count,
                         const float* __restrict q, int nh, float scale, float* __restrict k,
                         float* __restrict s, float* __restrict m, float* __restrict l,
                         float* __restrict acc) {
  int n = 0;
  for (int j = 0; j < count; ++j) {
    if (idx[j] < 0) continue;
    const std::uint16_t* __restrict src = kv + static_cast<std::int64_t>(idx[j]) * kDimQK;
    float* __restrict dst = k + static_cast<std::int64_t>(n) * kDimQK;
    for (int d = 0; d < kDimQK; ++d) dst[d] = std::bit_cast<float>(static_cast<std::uint32_t>(src[d]) << 16);
    ++n;
  }
  if (n == 0) return;

  for (int h = 0; h < nh; ++h) {
    const float* __restrict qh = q + static_cast<std::int64_t>(h) * kDimQK;
    float mx = m[h];
    for (int j = 0; j < n; ++j) {
      s[j] = scale * dot576(qh, k + static_cast<std::int64_t>(j) * kDimQK);
      mx = std::max(mx, s[j]);
    }
    // m[h] = -inf before the first valid token: alpha = exp(-inf) = 0.
    const float alpha = std::exp(m[h] - mx);
    float sum = 0;
    for (int j = 0; j < n; ++j) {
      s[j] = std::exp(s[j] - mx);
      sum += s[j];
    }
    l[h] = l[h] * alpha + sum;
    m[h] = mx;
    float* __restrict a = acc + static_cast<std::int64_t>(h) * kDimV;
    if (alpha != 1.0f)
      for (int d = 0; d < kDimV; ++d) a[d] *= alpha;
    for (int j = 0; j < n; ++j) {
      const float p = s[j];
      const float* __restrict v = k + static_cast<std::int64_t>(j) * kDimQK;  // the latent part is the value
      for (int d = 0; d < kDimV; ++d) a[d] += p * v[d];
    }
  }
}

MLA_HOT void combine_row(const float* __restrict part_o, const float* __restrict part_m,
                         const float* __restrict part_l, int nsplit, std::uint16_t* __restrict o,
                         float* __restrict lse) {
  float mx = kNegInf;
  for (int s = 0; s < nsplit; ++s) mx = std::max(mx, part_m[s]);
  if (mx == kNegInf) {  // no split saw a valid token
    std::fill(o, o + kDimV, std::uint16_t{0});
    *lse = kNegInf;
    return;
  }
  float total = 0;
  for (int s = 0; s < nsplit; ++s)
    if (part_m[s] != kNegInf) total += part_l[s] * std::exp(part_m[s] - mx);
  float out[kDimV] = {};
  for (int s = 0; s < nsplit; ++s) {
    if (part_m[s] == kNegInf) continue;  // an empty split contributes nothing
    const float w = std::exp(part_m[s] - mx) / total;
    const float* __restrict po = part_o + static_cast<std::int64_t>(s) * kDimV;
    for (int d = 0; d < kDimV; ++d) out[d] += w * po[d];
  }
  for (int d = 0; d < kDimV; ++d) o[d] = float_to_bf16_bits(out[d]);
  *lse = mx + std::log(total);
}

}  // namespace

void Scratch::reserve(int block_t, int block_h) {
  k.resize(static_cast<std::size_t>(block_t) * kDimQK);
  q.resize(static_cast<std::size_t>(block_h) * kDimQK);
  s.resize(static_cast<std::size_t>(block_t));
  acc.resize(static_cast<std::size_t>(block_h) * kDimV);
  m.resize(static_cast<std::size_t>(block_h));
  l.resize(static_cast<std::size_t>(block_h));
}

long long Scratch::bytes(int block_t, int block_h) {
  return 4LL * (static_cast<long long>(block_t) * kDimQK + block_h * kDimQK + block_t + block_h * kDimV + 2 * block_h);
}

void split_task(const StepArgs& a, std::int64_t task, Scratch& scratch) {
  const Point& p = a.point;
  const SplitPlan& plan = a.split;
  const int split = static_cast<int>(task % plan.nsplit);
  const std::int64_t bg = task / plan.nsplit;
  const int group = static_cast<int>(bg % plan.head_groups);
  const int b = static_cast<int>(bg / plan.head_groups);
  const int h0 = group * plan.block_h;
  const int nh = std::min(plan.block_h, p.heads - h0);
  scratch.reserve(a.block_t, plan.block_h);

  // q of the group's heads as float, once per task.
  for (int h = 0; h < nh; ++h) {
    const std::uint16_t* src = a.q + (static_cast<std::int64_t>(b) * p.heads + h0 + h) * kDimQK;
    float* dst = scratch.q.data() + static_cast<std::int64_t>(h) * kDimQK;
    for (int d = 0; d < kDimQK; ++d) dst[d] = bf16_bits_to_float(src[d]);
  }
  std::fill(scratch.m.begin(), scratch.m.begin() + nh, kNegInf);
  std::fill(scratch.l.begin(), scratch.l.begin() + nh, 0.0f);
  std::fill(scratch.acc.begin(), scratch.acc.begin() + static_cast<std::int64_t>(nh) * kDimV, 0.0f);

  TileRange range = split_tiles(plan, split);
  if (a.drop_last_tile && range.last > range.first) --range.last;
  const std::int32_t* idx = a.indices + static_cast<std::int64_t>(b) * p.topk;
  for (int t = range.first; t < range.last; ++t) {
    const int first = t * a.block_t;
    const int count = std::min(a.block_t, p.topk - first);
    tile_update(a.kv, idx + first, count, scratch.q.data(), nh, a.scale, scratch.k.data(), scratch.s.data(),
                scratch.m.data(), scratch.l.data(), scratch.acc.data());
  }

  for (int h = 0; h < nh; ++h) {
    const std::int64_t part = (static_cast<std::int64_t>(b) * p.heads + h0 + h) * plan.nsplit + split;
    std::memcpy(a.part_o + part * kDimV, scratch.acc.data() + static_cast<std::int64_t>(h) * kDimV,
                sizeof(float) * kDimV);
    a.part_m[part] = scratch.m[h];
    a.part_l[part] = scratch.l[h];
  }
}

std::int64_t combine_tasks(const Point& point) {
  const std::int64_t rows = static_cast<std::int64_t>(point.batch) * point.heads;
  return (rows + kCombineRows - 1) / kCombineRows;
}

void combine_task(const StepArgs& a, std::int64_t task) {
  const std::int64_t rows = static_cast<std::int64_t>(a.point.batch) * a.point.heads;
  const int nsplit = a.split.nsplit;
  const std::int64_t end = std::min(rows, (task + 1) * kCombineRows);
  for (std::int64_t r = task * kCombineRows; r < end; ++r)
    combine_row(a.part_o + r * nsplit * kDimV, a.part_m + r * nsplit, a.part_l + r * nsplit, nsplit,
                a.o + r * kDimV, a.lse + r);
}

const char* simd_level() {
#if MLA_HAVE_CLONES
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4 (AVX-512)";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3 (AVX2, FMA)";
  return "x86-64 baseline (SSE2)";
#else
  return "compiler default";
#endif
}

}  // namespace mla::cpu
