// The compiled kernels, as the backend sees them: each (block_t, num_warps,
// num_stages) variant of each KV dtype lives in its own translation unit
// (variant.cu.in) and hands out its two split kernels (16- and 32-row head
// tiles) through split_kernel_ops; combine.cu holds the kernels every
// variant shares.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "mla/problem.h"

namespace mla::cuda {

// Arguments of one split launch (one decode step of one input set).
struct SplitArgs {
  const std::uint16_t* q = nullptr;         // [B, H, 576] bf16 bits
  const void* kv = nullptr;                 // N rows of kv_row_bytes(dtype): [N, 576] bf16 bits, or 656-byte fp8 rows
  const std::int32_t* indices = nullptr;    // [B, topk]
  std::uint16_t* o = nullptr;               // [B, H, 512] bf16 bits, written when nsplit == 1
  float* lse = nullptr;                     // [B, H] natural log, written when nsplit == 1
  float* o_part = nullptr;                  // [B, H, nsplit, 512] normalised partial outputs
  float* lse_part = nullptr;                // [B, H, nsplit] log2-domain partial lse
  int batch = 0, heads = 0, topk = 0;
  int tiles = 0, nsplit = 0, head_groups = 0;
  int block_h = 0;                          // heads per CTA (plan_split), <= the kernel's rows
  float scale_log2 = 0;                     // softmax scale * log2(e)
};

struct CombineArgs {
  const float* o_part = nullptr;
  const float* lse_part = nullptr;
  std::uint16_t* o = nullptr;
  float* lse = nullptr;
  int nsplit = 0;
};

struct SplitKernelOps {
  // The __global__ function of the kernel with `block_h` rows (16 or 32),
  // for cudaFuncGetAttributes, cudaFuncSetAttribute and the occupancy API.
  const void* (*kernel)(int block_h);
  // Launches it on `stream`; the caller checks cudaGetLastError.
  void (*launch)(int block_h, const SplitArgs& args, unsigned grid, int smem_bytes, cudaStream_t stream);
};

// Defined only in the variant's own translation unit.
template <int BlockT, int NumWarps, int NumStages, KvDtype Dtype>
SplitKernelOps split_kernel_ops();

// Nullptr-free lookup over the compiled variants; ok = false when
// (block_t, num_warps, num_stages) is not one of them.
SplitKernelOps find_split_kernel(KvDtype dtype, int block_t, int num_warps, int num_stages, bool* ok);

// The combine kernel with `groups` split groups (combine_groups(nsplit)).
const void* combine_kernel(int groups);
// Returns the launch's error (cudaLaunchKernelEx); the caller also checks cudaGetLastError.
cudaError_t launch_combine(const CombineArgs& args, unsigned grid, cudaStream_t stream);

// Writes %globaltimer (ns) and clock64 of multiprocessor 0 to out[0], out[1]:
// NVBench's way of measuring the SM clock over a timed region (one 1-thread
// block a multiprocessor, so one of them lands on SM 0).
void launch_timestamps(unsigned long long* out, int multiprocessors, cudaStream_t stream);

// Fills rows [0, rows) of the cache: bf16 rows of mla::kv_element(seed, row,
// col), or the fp8 rows of mla/kv_cache.h (kv_fp8_row), byte for byte what
// the host computes.
void launch_fill_kv(void* kv, long long rows, KvDtype dtype, std::uint64_t seed, cudaStream_t stream);

}  // namespace mla::cuda
