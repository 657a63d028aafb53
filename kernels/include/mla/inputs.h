// Deterministic inputs. Every element of q and of the KV cache is a pure
// function of (seed, stream, index), computable on the host and on the device
// with bit-identical results, so a backend can fill gigabytes on the device
// while the float64 reference regenerates only the rows it needs on the host.
//
// Values are close to N(0, 1) (Irwin-Hall of four 16-bit uniforms), rounded
// to bf16; never zero-filled, so unwritten or wrongly indexed data shows.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "mla/problem.h"

#if defined(__CUDACC__)
#define MLA_HD __host__ __device__
#else
#define MLA_HD
#endif

namespace mla {

// Streams: which tensor an element belongs to.
inline constexpr std::uint64_t kStreamKv = 1;
inline constexpr std::uint64_t kStreamQ = 2;  // + input set number

MLA_HD inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Round-to-nearest-even float -> bf16 bits; NaN stays NaN.
MLA_HD inline std::uint16_t float_to_bf16_bits(float f) {
#if defined(__CUDA_ARCH__)
  std::uint32_t u = __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
#endif
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0) return 0x7FC0;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

MLA_HD inline float bf16_bits_to_float(std::uint16_t b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

// Element `index` of `stream`, as bf16 bits.
MLA_HD inline std::uint16_t gen_bf16(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  std::uint64_t h = splitmix64(seed ^ splitmix64(stream * 0xD1B54A32D192ED03ull + index));
  std::int32_t s = static_cast<std::int32_t>(h & 0xFFFF) + static_cast<std::int32_t>((h >> 16) & 0xFFFF) +
                   static_cast<std::int32_t>((h >> 32) & 0xFFFF) + static_cast<std::int32_t>(h >> 48) - 131070;
  // s is exact in float; one correctly rounded multiply is the same on host and device.
  return float_to_bf16_bits(static_cast<float>(s) * (1.0f / 37837.23f));
}

MLA_HD inline std::uint16_t kv_element(std::uint64_t seed, std::int64_t row, int col) {
  return gen_bf16(seed, kStreamKv, static_cast<std::uint64_t>(row) * kDimQK + static_cast<std::uint64_t>(col));
}

MLA_HD inline std::uint16_t q_element(std::uint64_t seed, int set, std::int64_t flat_index) {
  return gen_bf16(seed, kStreamQ + static_cast<std::uint64_t>(set), static_cast<std::uint64_t>(flat_index));
}

// Where the KV rows of each (input set, batch element) live: every pair has
// its own region of `context_rows` rows, as every sequence in a real batch has
// its own cache, so rotating input sets really walks new memory.
struct CacheLayout {
  int sets = 2;              // timing input sets; the check set is one more, the last
  int batch = 1;
  int context_rows = 8192;   // tokens of context each batch element may select from
  std::int64_t region_base(int set, int b) const {
    return (static_cast<std::int64_t>(set) * batch + b) * context_rows;
  }
  std::int64_t total_rows() const {
    return static_cast<std::int64_t>(sets + 1) * batch * context_rows;
  }
  int check_set() const { return sets; }
};

// The host-side description of one input set: its q and indices are stored,
// its KV rows are regenerated from the seed on demand.
struct HostInputs {
  Point point;
  std::uint64_t seed = 0;
  int set = 0;
  float softmax_scale = static_cast<float>(kDefaultSoftmaxScale);
  std::vector<std::uint16_t> q;       // [B, H, 576] bf16 bits
  std::vector<std::int32_t> indices;  // [B, topk]
};

// Builds q and the indices of one input set. Indices are distinct within a
// batch element and drawn from its own region. With masked_fraction > 0 (the
// check set) about that fraction of entries is -1, and, where the batch is
// large enough, batch element 1 has a short tail-masked context and batch
// element 2 is masked entirely -- the cases a decode kernel gets wrong.
HostInputs make_inputs(const Point& point, const CacheLayout& layout, std::uint64_t seed, int set,
                       double masked_fraction, float softmax_scale);

}  // namespace mla
