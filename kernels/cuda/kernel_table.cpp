#include "kernel_table.h"

namespace mla::cuda {

// The explicit specialisations live in the generated variant units.
#define MLA_VARIANT(bt, w, s)                                       \
  template <>                                                       \
  SplitKernelOps split_kernel_ops<bt, w, s, KvDtype::kBf16>();      \
  template <>                                                       \
  SplitKernelOps split_kernel_ops<bt, w, s, KvDtype::kFp8E4m3>();
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

template <int W, int S, KvDtype D>
SplitKernelOps by_block_t(int block_t, bool* ok) {
  switch (block_t) {
    case 16: return split_kernel_ops<16, W, S, D>();
    case 32: return split_kernel_ops<32, W, S, D>();
    case 64: return split_kernel_ops<64, W, S, D>();
  }
  *ok = false;
  return {};
}

template <int W, KvDtype D>
SplitKernelOps by_stages(int block_t, int num_stages, bool* ok) {
  switch (num_stages) {
    case 1: return by_block_t<W, 1, D>(block_t, ok);
    case 2: return by_block_t<W, 2, D>(block_t, ok);
    case 3: return by_block_t<W, 3, D>(block_t, ok);
  }
  *ok = false;
  return {};
}

template <KvDtype D>
SplitKernelOps by_warps(int block_t, int num_warps, int num_stages, bool* ok) {
  switch (num_warps) {
    case 4: return by_stages<4, D>(block_t, num_stages, ok);
    case 8: return by_stages<8, D>(block_t, num_stages, ok);
  }
  *ok = false;
  return {};
}

}  // namespace

SplitKernelOps find_split_kernel(KvDtype dtype, int block_t, int num_warps, int num_stages, bool* ok) {
  *ok = true;
  if (dtype == KvDtype::kFp8E4m3) return by_warps<KvDtype::kFp8E4m3>(block_t, num_warps, num_stages, ok);
  return by_warps<KvDtype::kBf16>(block_t, num_warps, num_stages, ok);
}

}  // namespace mla::cuda
