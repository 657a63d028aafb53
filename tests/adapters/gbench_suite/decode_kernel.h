// A stand-in for a decode kernel, for perfwatch's adapter tests and the
// planted-slowdown repos of tests/adapters/make_adapter_repo.sh: each of
// `batch` rows reduces `tokens` values in tiles of BlockT, kPasses times.
// The work grows with batch and tokens and not with BlockT, so the two
// "variants" (BlockT 16 and 32) measure about the same.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace decode {

// The planted slowdown of make_adapter_repo.sh changes this to 2.
constexpr int kPasses = 1;

template <int BlockT>
double decode_step(const std::vector<float>& kv, int batch, int tokens) {
  double total = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (int b = 0; b < batch; ++b) {
      double row_max = -1e30, row_sum = 0;
      for (int t0 = 0; t0 < tokens; t0 += BlockT) {
        for (int t = t0; t < t0 + BlockT && t < tokens; ++t) {
          double x = kv[static_cast<std::size_t>((b * 7 + t) % static_cast<int>(kv.size()))];
          if (x > row_max) {
            row_sum *= std::exp(row_max - x);
            row_max = x;
          }
          row_sum += std::exp(x - row_max);
        }
      }
      total += row_max + std::log(row_sum);
    }
  }
  return total;
}

}  // namespace decode
