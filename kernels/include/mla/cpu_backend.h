// The CPU backend's construction options. backend.h's make_cpu_backend(threads)
// is the usual entry; this one adds the test-only fault the bench uses to
// prove that its correctness gate stops a wrong kernel.
#pragma once

#include <memory>

#include "mla/backend.h"

namespace mla {

struct CpuBackendOptions {
  int threads = 0;  // worker threads; 0 = one per hardware thread
  // Test only: every split skips its last tile -- a real off-by-one in the
  // algorithm, so the output is wrong the way a buggy kernel's is.
  bool fault_drop_last_tile = false;
};

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options);

}  // namespace mla
