#include "cpu_split_kv.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "mla/inputs.h"
#include "mla/kv_cache.h"
#include "cpu_tile.h"
#include "cpu_tuning.h"
#include "simd.h"


namespace mla::cpu {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// The tile kernel for the instruction set this CPU has, chosen once: vector
// width and register blocks sized to its registers (32 x 512-bit with
// AVX-512, 16 x 256-bit with AVX2, 16 x 128-bit with SSE2).
#if MLA_HAVE_CLONES
__attribute__((target("arch=x86-64-v4"))) void tile_v4(const TileArgs& t) { tile_update_impl<16, 4, 4, 4, 4>(t); }
__attribute__((target("arch=x86-64-v3"))) void tile_v3(const TileArgs& t) { tile_update_impl<8, 2, 4, 2, 4>(t); }
void tile_base(const TileArgs& t) { tile_update_impl<4, 2, 2, 2, 2>(t); }

struct TileKernel {
  void (*run)(const TileArgs&);
  const char* isa;
};

TileKernel pick_tile_kernel() {
  __builtin_cpu_init();
  if (tuning::kMaxVectorFloats >= 16 && __builtin_cpu_supports("x86-64-v4"))
    return {tile_v4, "x86-64-v4 (AVX-512), 16-float vectors"};
  if (tuning::kMaxVectorFloats >= 8 && __builtin_cpu_supports("x86-64-v3"))
    return {tile_v3, "x86-64-v3 (AVX2, FMA), 8-float vectors"};
  return {tile_base, "x86-64 baseline (SSE2), 4-float vectors"};
}
#else
void tile_any(const TileArgs& t) { tile_update_impl<8, 2, 4, 2, 4>(t); }
struct TileKernel {
  void (*run)(const TileArgs&);
  const char* isa;
};
TileKernel pick_tile_kernel() { return {tile_any, "compiler default, 8-float vectors"}; }
#endif

const TileKernel& tile_kernel() {
  static const TileKernel kernel = pick_tile_kernel();
  return kernel;
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

// kv_element for a whole row; the 64-bit hash vectorises with AVX-512.
MLA_HOT void generate_kv_row(std::uint64_t seed, std::int64_t row, std::uint16_t* __restrict dst) {
  for (int d = 0; d < kDimQK; ++d) dst[d] = kv_element(seed, row, d);
}

// e4m3 byte -> float for the fp8 gather, built once.
const float* e4m3_table() {
  static const struct Table {
    float value[256];
    Table() {
      for (int b = 0; b < 256; ++b) value[b] = e4m3_to_float(static_cast<std::uint8_t>(b));
    }
  } table;
  return table.value;
}

}  // namespace

void Scratch::reserve(int block_t, int block_h) {
  k.resize(static_cast<std::size_t>(block_t) * kDimQK);
  q.resize(static_cast<std::size_t>(block_h) * kDimQK);
  s.resize(static_cast<std::size_t>(block_h) * block_t);
  alpha.resize(static_cast<std::size_t>(block_h));
  acc.resize(static_cast<std::size_t>(block_h) * kDimV);
  m.resize(static_cast<std::size_t>(block_h));
  l.resize(static_cast<std::size_t>(block_h));
}

long long Scratch::bytes(int block_t, int block_h) {
  return 4LL * (static_cast<long long>(block_t) * kDimQK + block_h * kDimQK + static_cast<long long>(block_h) * block_t +
                block_h * kDimV + 3 * block_h);
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
  TileArgs tile{a.kv, p.dtype, e4m3_table(), nullptr, 0, scratch.q.data(), nh, a.scale, scratch.k.data(),
                scratch.s.data(), a.block_t, scratch.alpha.data(), scratch.m.data(), scratch.l.data(), scratch.acc.data()};
  void (*run)(const TileArgs&) = tile_kernel().run;
  for (int t = range.first; t < range.last; ++t) {
    const int first = t * a.block_t;
    tile.idx = idx + first;
    tile.count = std::min(a.block_t, p.topk - first);
    run(tile);
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

void generate_kv_rows(std::uint64_t seed, const std::int32_t* rows, int count, KvDtype dtype, std::uint8_t* kv) {
  const std::int64_t row_bytes = kv_row_bytes(dtype);
  for (int j = 0; j < count; ++j) {
    if (rows[j] < 0) continue;
    std::uint8_t* dst = kv + static_cast<std::int64_t>(rows[j]) * row_bytes;
    if (dtype == KvDtype::kFp8E4m3)
      kv_fp8_row(seed, rows[j], dst);
    else
      generate_kv_row(seed, rows[j], reinterpret_cast<std::uint16_t*>(dst));
  }
}

const char* simd_level() { return tile_kernel().isa; }

}  // namespace mla::cpu
