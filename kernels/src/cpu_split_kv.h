// The split-KV decode step on the CPU: the same decomposition the GPU kernel
// uses, one task per (batch element, head group, split), then a combine.
//
//   split task: for each tile of block_t tokens in the split's tile range,
//     gather the valid rows (bf16 or fp8 -> float once, shared by the group's heads),
//     scores = scale * q.k, online softmax (running max m, running sum l,
//     rescaled accumulator), acc += p.v; write acc (unnormalised), m and l.
//   combine task: merge a row's nsplit partials into o (bf16, nearest even)
//     and lse; a row with no valid token gets o = 0 and lse = -inf.
#pragma once

#include <cstdint>
#include <vector>

#include "mla/problem.h"

namespace mla::cpu {

struct StepArgs {
  const std::uint8_t* kv = nullptr;        // the cache: rows of kv_row_bytes(point.dtype)
  const std::uint16_t* q = nullptr;        // [B, H, 576] bf16
  const std::int32_t* indices = nullptr;   // [B, topk]
  Point point;
  float scale = 0;
  int block_t = 32;
  SplitPlan split;
  float* part_o = nullptr;  // [B, H, nsplit, 512]
  float* part_m = nullptr;  // [B, H, nsplit]
  float* part_l = nullptr;  // [B, H, nsplit]
  std::uint16_t* o = nullptr;  // [B, H, 512] bf16
  float* lse = nullptr;        // [B, H]
  bool drop_last_tile = false;  // test-only fault: a real off-by-one, so the check must catch it
};

// Per-worker buffers, reused across tasks and steps.
struct Scratch {
  std::vector<float> k;      // [block_t, 576] the gathered tile as float
  std::vector<float> q;      // [block_h, 576]
  std::vector<float> s;      // [block_h, block_t] scores, then probabilities
  std::vector<float> alpha;  // [block_h]
  std::vector<float> acc;    // [block_h, 512]
  std::vector<float> m, l;   // [block_h]
  void reserve(int block_t, int block_h);
  static long long bytes(int block_t, int block_h);
};

// Task index in [0, B * head_groups * nsplit), split fastest.
void split_task(const StepArgs& args, std::int64_t task, Scratch& scratch);

// Rows per combine task, and the task over rows [task * kCombineRows, ...).
inline constexpr int kCombineRows = 8;
std::int64_t combine_tasks(const Point& point);
void combine_task(const StepArgs& args, std::int64_t task);

// Writes rows[j] of the cache for each j with rows[j] >= 0: bf16 rows of
// kv_element, or the fp8 rows of mla/kv_cache.h; kv is the cache's first row.
void generate_kv_rows(std::uint64_t seed, const std::int32_t* rows, int count, KvDtype dtype, std::uint8_t* kv);

}  // namespace mla::cpu
