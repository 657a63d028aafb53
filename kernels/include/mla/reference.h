// The float64 reference of one decode step, and the comparison that decides
// whether a backend's output is correct.
#pragma once

#include <cstdint>
#include <vector>

#include "mla/backend.h"
#include "mla/inputs.h"
#include "mla/problem.h"

namespace mla {

struct ReferenceOutputs {
  Point point;
  std::vector<double> o;    // [B, H, 512]; 0 for a batch element with every index masked
  std::vector<double> lse;  // [B, H]; -inf for a batch element with every index masked
};

// Computes softmax(scale * q.k) . v in double for every (b, h), regenerating
// the KV rows the indices select with kv_element(inputs.seed, ...) -- for an
// fp8 point (inputs.point.dtype), the dequantised fp8 rows of mla/kv_cache.h,
// so a backend is held to the cache it reads. Masked indices (-1) are
// skipped. threads = 0: one per hardware thread.
// REQUIRES: inputs.q and inputs.indices sized for inputs.point.
ReferenceOutputs compute_reference(const HostInputs& inputs, int threads = 0);

struct Tolerance {
  double max_rel_l2_o = 0.01;
  double max_abs_lse = 0.001;
};

// What the bench's check line reports.
struct Comparison {
  // ||o - ref|| / ||ref|| over all of o (||o - ref|| when ref is all zero);
  // NaN when o holds a NaN anywhere.
  double rel_l2_o = 0;
  // Largest |lse - ref| over the rows whose reference is finite (0 when there
  // are none); NaN when such a row holds a NaN.
  double max_abs_lse = 0;
  // Outputs that are NaN (poison left unwritten, or computed), or infinite
  // where the reference is finite.
  long long nonfinite = 0;
  // Fully masked rows whose o is not all zero or whose lse is not -inf
  // (a NaN there counts in nonfinite instead).
  long long masked_rows_wrong = 0;
  bool passed = false;
  std::string reason;  // why not passed, naming the first measure that failed
};

// REQUIRES: out.o and out.lse sized for ref.point.
Comparison compare(const ReferenceOutputs& ref, const CheckOutputs& out, const Tolerance& tolerance);

}  // namespace mla
