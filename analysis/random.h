// A small seeded random generator whose output is the same on every platform
// and standard library (std::uniform_int_distribution and
// std::normal_distribution are not), so that permutation tests and the
// detection simulation are reproducible from their seed.
#pragma once

#include <cstdint>

namespace perfwatch::analysis {

class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed) : state_(seed) {}

  // SplitMix64 (Steele, Lea, Flood 2014): passes BigCrush, one add and a mix.
  std::uint64_t next();
  // Uniform in [0, 1) with 53 random bits.
  double uniform();
  // Uniform integer in [0, bound) without modulo bias. REQUIRES: bound > 0.
  std::uint64_t below(std::uint64_t bound);
  // Standard normal (Marsaglia's polar method; no cached second value, so
  // the stream depends only on the seed and the number of calls).
  double normal();

 private:
  std::uint64_t state_;
};

}  // namespace perfwatch::analysis
