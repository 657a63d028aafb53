#include "kernel_table.h"

namespace mla::cuda {

// The explicit specialisations live in the generated variant units.
#define MLA_VARIANT(bt, w, s) \
  template <>             \
  SplitKernelOps split_kernel_ops<bt, w, s>();
#define MLA_VARIANTS_OF(bt, w) MLA_VARIANT(bt, w, 1) MLA_VARIANT(bt, w, 2) MLA_VARIANT(bt, w, 3)
MLA_VARIANTS_OF(16, 4)
MLA_VARIANTS_OF(16, 8)
MLA_VARIANTS_OF(32, 4)
MLA_VARIANTS_OF(32, 8)
MLA_VARIANTS_OF(64, 4)
MLA_VARIANTS_OF(64, 8)
#undef MLA_VARIANTS_OF
#undef MLA_VARIANT

namespace {

template <int W, int S>
SplitKernelOps by_block_t(int block_t, bool* ok) {
  switch (block_t) {
    case 16: return split_kernel_ops<16, W, S>();
    case 32: return split_kernel_ops<32, W, S>();
    case 64: return split_kernel_ops<64, W, S>();
  }
  *ok = false;
  return {};
}

template <int W>
SplitKernelOps by_stages(int block_t, int num_stages, bool* ok) {
  switch (num_stages) {
    case 1: return by_block_t<W, 1>(block_t, ok);
    case 2: return by_block_t<W, 2>(block_t, ok);
    case 3: return by_block_t<W, 3>(block_t, ok);
  }
  *ok = false;
  return {};
}

}  // namespace

SplitKernelOps find_split_kernel(int block_t, int num_warps, int num_stages, bool* ok) {
  *ok = true;
  switch (num_warps) {
    case 4: return by_stages<4>(block_t, num_stages, ok);
    case 8: return by_stages<8>(block_t, num_stages, ok);
  }
  *ok = false;
  return {};
}

}  // namespace mla::cuda
