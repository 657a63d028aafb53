#include "mla/problem.h"

#include <algorithm>

namespace mla {

const char* to_string(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kBf16: return "bf16";
    case KvDtype::kFp8E4m3: return "fp8";
  }
  return "unknown";
}

bool parse_kv_dtype(const std::string& text, KvDtype* out) {
  if (text == "bf16") {
    *out = KvDtype::kBf16;
    return true;
  }
  if (text == "fp8" || text == "fp8_e4m3") {
    *out = KvDtype::kFp8E4m3;
    return true;
  }
  return false;
}

SplitPlan plan_split(const Point& point, int block_t, int target_ctas) {
  SplitPlan plan;
  plan.block_h = std::min(32, point.heads);
  plan.head_groups = (point.heads + plan.block_h - 1) / plan.block_h;
  plan.tiles = (point.topk + block_t - 1) / block_t;
  // In 64 bits: B * head_groups reaches 4096 * 32 and target_ctas 2^20.
  const long long per_split = static_cast<long long>(point.batch) * plan.head_groups;
  const long long wanted = (static_cast<long long>(target_ctas) + per_split - 1) / per_split;
  plan.nsplit = static_cast<int>(std::clamp<long long>(wanted, 1, plan.tiles));
  plan.ctas = per_split * plan.nsplit;
  return plan;
}

TileRange split_tiles(const SplitPlan& plan, int split) {
  // Split s gets tiles [s*T/n, (s+1)*T/n): sizes differ by at most one, and
  // none is empty while n <= T.
  const long long t = plan.tiles, n = plan.nsplit;
  return {static_cast<int>(split * t / n), static_cast<int>((split + 1) * t / n)};
}

int kv_row_bytes(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kBf16: return kDimQK * 2;
    // FlashMLA's row: 512 e4m3 bytes, 4 fp32 scales, 64 bf16 rope values.
    case KvDtype::kFp8E4m3: return kDimLatent + 4 * 4 + kDimRope * 2;
  }
  return kDimQK * 2;
}

double bytes_per_step(const Point& point) {
  const double b = point.batch, h = point.heads, k = point.topk;
  const double kv = b * k * kv_row_bytes(point.dtype);
  const double q = b * h * kDimQK * 2.0;
  const double o = b * h * kDimV * 2.0;
  const double lse = b * h * 4.0;
  const double indices = b * k * 4.0;
  return kv + q + o + lse + indices;
}

double flops_per_step(const Point& point) {
  return 2.0 * point.batch * point.heads * static_cast<double>(point.topk) * (kDimQK + kDimV);
}

}  // namespace mla
