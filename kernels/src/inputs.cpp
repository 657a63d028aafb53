#include "mla/inputs.h"

#include <numeric>
#include <stdexcept>
#include <string>

namespace mla {
namespace {

// Index choice and masking draw from their own streams, far from the KV and
// q streams, so they never correlate with the values.
constexpr std::uint64_t kStreamIndices = 0x10000;
constexpr std::uint64_t kStreamMask = 0x20000;

// A counter-based generator: draw i of stream (seed, key) is a pure function.
class Draws {
 public:
  Draws(std::uint64_t seed, std::uint64_t key) : base_(splitmix64(seed ^ splitmix64(key))) {}
  std::uint64_t next() { return splitmix64(base_ + counter_++ * 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, n) for n < 2^32 (the bias of the multiply-shift is below 2^-32).
  std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>(((next() >> 32) * static_cast<std::uint64_t>(n)) >> 32);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t base_;
  std::uint64_t counter_ = 0;
};

std::uint64_t key_of(std::uint64_t stream, int set, int b) {
  return (stream + static_cast<std::uint64_t>(set)) * 0x100000001ull + static_cast<std::uint64_t>(b);
}

}  // namespace

HostInputs make_inputs(const Point& point, const CacheLayout& layout, std::uint64_t seed, int set,
                       double masked_fraction, float softmax_scale) {
  if (point.batch < 1 || point.heads < 1 || point.topk < 1)
    throw std::invalid_argument("make_inputs: batch, heads and topk must be >= 1");
  if (layout.batch != point.batch)
    throw std::invalid_argument("make_inputs: layout.batch (" + std::to_string(layout.batch) +
                                ") differs from the point's batch (" + std::to_string(point.batch) + ")");
  if (layout.context_rows < point.topk)
    throw std::invalid_argument("make_inputs: context_rows (" + std::to_string(layout.context_rows) +
                                ") must be >= topk (" + std::to_string(point.topk) +
                                ") for the indices to be distinct");
  if (set < 0 || set > layout.sets)
    throw std::invalid_argument("make_inputs: set " + std::to_string(set) + " is outside the layout's " +
                                std::to_string(layout.sets + 1) + " sets");

  HostInputs in;
  in.point = point;
  in.seed = seed;
  in.set = set;
  in.softmax_scale = softmax_scale;

  const std::int64_t q_count = static_cast<std::int64_t>(point.batch) * point.heads * kDimQK;
  in.q.resize(static_cast<std::size_t>(q_count));
  for (std::int64_t i = 0; i < q_count; ++i) in.q[static_cast<std::size_t>(i)] = q_element(seed, set, i);

  const int topk = point.topk;
  in.indices.resize(static_cast<std::size_t>(point.batch) * topk);
  std::vector<std::int32_t> pool(static_cast<std::size_t>(layout.context_rows));
  for (int b = 0; b < point.batch; ++b) {
    // The first topk draws of a Fisher-Yates shuffle of the region: distinct
    // rows in random order, as a top-k selection hands them to the kernel.
    std::iota(pool.begin(), pool.end(), 0);
    Draws pick(seed, key_of(kStreamIndices, set, b));
    const std::int64_t base = layout.region_base(set, b);
    std::int32_t* row = in.indices.data() + static_cast<std::size_t>(b) * topk;
    for (int j = 0; j < topk; ++j) {
      const std::uint32_t k = static_cast<std::uint32_t>(j) + pick.below(static_cast<std::uint32_t>(layout.context_rows - j));
      std::swap(pool[j], pool[k]);
      const std::int64_t global = base + pool[j];
      if (global > INT32_MAX)
        throw std::invalid_argument("make_inputs: the cache has more rows than int32 indices can address");
      row[j] = static_cast<std::int32_t>(global);
    }
    if (masked_fraction <= 0) continue;

    if (b == 1) {
      // A short sequence: only the first third of its slots hold tokens; the
      // length is rarely a multiple of a tile, so a partial last tile shows.
      const int valid = topk / 3 + 1;
      for (int j = valid; j < topk; ++j) row[j] = -1;
    } else if (b == 2) {
      // A batch element with nothing to attend to: o = 0, lse = -inf.
      for (int j = 0; j < topk; ++j) row[j] = -1;
    } else {
      Draws mask(seed, key_of(kStreamMask, set, b));
      for (int j = 0; j < topk; ++j)
        if (mask.unit() < masked_fraction) row[j] = -1;
    }
  }
  return in;
}

}  // namespace mla
