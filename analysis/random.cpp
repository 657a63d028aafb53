#include "analysis/random.h"

#include <cmath>

namespace perfwatch::analysis {

std::uint64_t SeededRng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double SeededRng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::uint64_t SeededRng::below(std::uint64_t bound) {
  // Lemire's multiply-shift (ACM TOMACS 2019): the high word of x * bound,
  // rejecting the few x whose low word would make some results likelier.
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
  std::uint64_t low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double SeededRng::normal() {
  double u, v, s;
  do {
    u = 2 * uniform() - 1;
    v = 2 * uniform() - 1;
    s = u * u + v * v;
  } while (s >= 1 || s == 0);
  return u * std::sqrt(-2 * std::log(s) / s);
}

}  // namespace perfwatch::analysis
