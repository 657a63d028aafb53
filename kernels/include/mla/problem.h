// One decode step of DeepSeek sparse MLA (multi-head latent attention), as
// DeepSeek-V3.2 runs it with the lightning indexer's top-k selection:
//
//   q        [B, H, 576] bf16   512 latent ("nope", absorbed) + 64 rope dims
//   kv cache [N, 576]    bf16   one row per token: latent (also the value) + rope key;
//                               or fp8: FlashMLA's 656-byte rows (mla/kv_cache.h)
//   indices  [B, topk]   int32  rows of the cache each batch element attends to; -1 = masked
//   o        [B, H, 512] bf16   softmax(scale * q.k) . v, v = the latent part of the row
//   lse      [B, H]      fp32   natural log of sum(exp(scale * q.k)); -inf when all masked
//
// Everything in this header is plain host C++ shared by the reference, the CPU
// backend, the CUDA backend and the bench.
#pragma once

#include <cstdint>
#include <string>

namespace mla {

inline constexpr int kDimLatent = 512;  // compressed KV latent; also the value dimension
inline constexpr int kDimRope = 64;     // decoupled rotary key
inline constexpr int kDimQK = kDimLatent + kDimRope;  // 576
inline constexpr int kDimV = kDimLatent;              // 512

// 1/sqrt(192): DeepSeek-V3's qk_head_dim (128 nope + 64 rope) before absorption.
inline constexpr double kDefaultSoftmaxScale = 0.07216878364870322;

// The KV cache's element type, the sweep's `dtype`: "bf16", or "fp8" (also
// spelt "fp8_e4m3"): e4m3 latent values with an fp32 scale per 128, bf16 rope.
enum class KvDtype { kBf16, kFp8E4m3 };
const char* to_string(KvDtype);  // "bf16" or "fp8"
bool parse_kv_dtype(const std::string& text, KvDtype* out);

// One sweep point: the shape of one decode step.
struct Point {
  int batch = 1;
  int heads = 16;   // local heads: 64 heads over 4-way tensor parallelism = 16
  int topk = 2048;
  KvDtype dtype = KvDtype::kBf16;
};

// Knobs of one kernel variant, in the users' words. block_t, num_warps and
// num_stages are compile-time on the GPU; target_ctas is chosen at run time.
struct VariantParams {
  int block_t = 32;      // tokens per KV tile
  int num_warps = 4;     // warps per CTA
  int num_stages = 2;    // depth of the asynchronous gather pipeline
  int target_ctas = 0;   // 0 = two per SM of the device (CPU: two per worker thread)
};

// How one step is split into CTAs (GPU) or tasks (CPU).
struct SplitPlan {
  int block_h = 0;          // heads per CTA: min(32, H)
  int head_groups = 0;      // ceil(H / block_h)
  int tiles = 0;            // ceil(topk / block_t)
  int nsplit = 0;           // clamp(ceil(target_ctas / (B * head_groups)), 1, tiles)
  long long ctas = 0;       // B * head_groups * nsplit
};

// REQUIRES: point and block_t positive, target_ctas >= 1.
SplitPlan plan_split(const Point& point, int block_t, int target_ctas);

// Tiles [first, last) of split `split`: tiles are dealt out evenly so that no
// split is empty while nsplit <= tiles.
struct TileRange { int first; int last; };
TileRange split_tiles(const SplitPlan& plan, int split);

// The bytes a step must move through device memory at the least: the gathered
// KV rows (each once per batch element that selects it), q, o, lse and the
// indices. Split partials are not counted: they are the kernel's own choice.
double bytes_per_step(const Point& point);

// 2 * B * H * topk * (576 + 512): Q.K^T plus P.V, as the users count it.
double flops_per_step(const Point& point);

// Bytes of one KV row in the cache for the point's dtype: bf16 576 x 2 = 1152;
// fp8 512 e4m3 latent values + 4 fp32 scales + 64 bf16 rope values = 656.
int kv_row_bytes(KvDtype dtype);

}  // namespace mla
