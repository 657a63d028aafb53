// The kernels every variant shares: the combine of split partials, the SM
// clock probe and the device-side fill of the KV cache (bf16 or fp8 rows).
#include <cstdint>

#include "cuda_tuning.h"
#include "kernel_table.h"
#include "launch_plan.h"
#include "mla/inputs.h"
#include "mla/kv_cache.h"

namespace mla::cuda {
namespace {

constexpr float kNegInf = -__builtin_huge_valf();

// One CTA per (b, h): Groups groups of 128 threads, each thread four output
// columns; group g sums splits g, g + Groups, ... eight a round, and the
// groups meet in shared memory. The partial lse are log2-domain; the weights
// exp2(lse_s - max) sum the splits' softmax denominators back together.
// Every load of a round is independent, so a (b, h) costs a memory latency
// for the lse and one a round for the partials, not one a split.
//
// Launched as a programmatic dependent of the split kernel: it may be
// resident before that grid ends and waits for it (griddepcontrol.wait)
// before the first read. The partials are dead once read: their L2 lines
// are discarded instead of being written back to memory.
constexpr int kBatch = 8;

template <int Groups>
__global__ void __launch_bounds__(Groups * kCombineColumnThreads) combine_kernel_impl(const CombineArgs a) {
  constexpr int kThreads = Groups * kCombineColumnThreads;
  __shared__ float4 acc_s[Groups > 1 ? Groups - 1 : 1][kCombineColumnThreads];
  __shared__ float sum_s[Groups > 1 ? Groups - 1 : 1];
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  // The next split kernel, when launched as a programmatic dependent
  // (kSplitPdl), may become resident now; it waits for this grid to end.
  if constexpr (tuning::kSplitPdl) asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  const long long bh = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  const float* __restrict__ lse = a.lse_part + bh * a.nsplit;
  // Each warp finds the max on its own: no barrier before the partials load.
  float mx = kNegInf;
#pragma unroll kBatch
  for (int s = tid % 32; s < a.nsplit; s += 32) mx = fmaxf(mx, lse[s]);
  for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));

  const int group = tid / kCombineColumnThreads, col = (tid % kCombineColumnThreads) * 4;
  std::uint16_t* out = a.o + bh * kDimV + col;
  if (mx == kNegInf) {  // every index of this batch element masked
    if (group == 0) {
      *reinterpret_cast<uint2*>(out) = make_uint2(0u, 0u);
      if (tid == 0) a.lse[bh] = kNegInf;
    }
    return;
  }
  float sum = 0.f;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  const float* __restrict__ part = a.o_part + bh * a.nsplit * kDimV + col;
  for (int s0 = group; s0 < a.nsplit; s0 += kBatch * Groups) {
    float w[kBatch];
    float4 v[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int s = s0 + j * Groups;
      w[j] = s < a.nsplit ? exp2f(lse[s] - mx) : 0.f;
      v[j] = s < a.nsplit ? *reinterpret_cast<const float4*>(part + static_cast<long long>(s) * kDimV)
                          : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      sum += w[j];
      acc.x += w[j] * v[j].x; acc.y += w[j] * v[j].y; acc.z += w[j] * v[j].z; acc.w += w[j] * v[j].w;
    }
  }
  if constexpr (Groups > 1) {
    if (group > 0) {
      acc_s[group - 1][tid % kCombineColumnThreads] = acc;
      if (tid % kCombineColumnThreads == 0) sum_s[group - 1] = sum;
    }
  }
  __syncthreads();
  // Every read of this row's partials is done: drop their lines from L2.
  {
    const char* base = reinterpret_cast<const char*>(a.o_part + bh * a.nsplit * kDimV);
    const int lines = a.nsplit * kDimV * 4 / 128;
    for (int i = tid; i < lines; i += kThreads)
      asm volatile("discard.global.L2 [%0], 128;\n" ::"l"(base + static_cast<long long>(i) * 128) : "memory");
  }
  if (group != 0) return;
  if constexpr (Groups > 1) {
#pragma unroll
    for (int g = 0; g < Groups - 1; ++g) {
      const float4 v = acc_s[g][tid];
      acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
      sum += sum_s[g];
    }
  }
  const float inv = 1.f / sum;
  const std::uint32_t lo = static_cast<std::uint32_t>(float_to_bf16_bits(acc.x * inv)) |
                           (static_cast<std::uint32_t>(float_to_bf16_bits(acc.y * inv)) << 16);
  const std::uint32_t hi = static_cast<std::uint32_t>(float_to_bf16_bits(acc.z * inv)) |
                           (static_cast<std::uint32_t>(float_to_bf16_bits(acc.w * inv)) << 16);
  *reinterpret_cast<uint2*>(out) = make_uint2(lo, hi);
  if (tid == 0) a.lse[bh] = (mx + log2f(sum)) * 0.69314718055994531f;
}

__global__ void __launch_bounds__(1) timestamps_kernel(unsigned long long* out) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (smid == 0) {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    const long long clk = clock64();
    out[0] = ns;
    out[1] = static_cast<unsigned long long>(clk);
  }
}

// One thread a 16-byte piece (8 elements) of a row.
__global__ void __launch_bounds__(256) fill_kv_kernel(std::uint16_t* kv, long long rows, std::uint64_t seed) {
  constexpr int kPieces = kDimQK / 8;
  const long long pieces = rows * kPieces;
  for (long long p = blockIdx.x * 256ll + threadIdx.x; p < pieces; p += static_cast<long long>(gridDim.x) * 256) {
    const long long row = p / kPieces;
    const int col0 = static_cast<int>(p % kPieces) * 8;
    std::uint32_t w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      w[j] = static_cast<std::uint32_t>(kv_element(seed, row, col0 + 2 * j)) |
             (static_cast<std::uint32_t>(kv_element(seed, row, col0 + 2 * j + 1)) << 16);
    *reinterpret_cast<uint4*>(kv + row * kDimQK + col0) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// fp8 rows (mla/kv_cache.h): one thread a (row, part); parts 0..3 quantise
// latent block `part` (its largest magnitude first, then 16 bytes at a time,
// as kv_fp8_block does it, so the bytes equal the host's) and write its
// scale; part 4 copies the rope values.
__global__ void __launch_bounds__(256) fill_kv_fp8_kernel(std::uint8_t* kv, long long rows, std::uint64_t seed) {
  constexpr int kParts = kFp8Blocks + 1;
  const long long items = rows * kParts;
  for (long long it = blockIdx.x * 256ll + threadIdx.x; it < items; it += static_cast<long long>(gridDim.x) * 256) {
    const long long row = it / kParts;
    const int part = static_cast<int>(it % kParts);
    std::uint8_t* const dst = kv + row * kFp8RowBytes;
    if (part == kFp8Blocks) {
#pragma unroll 1
      for (int piece = 0; piece < 2 * kDimRope / 16; ++piece) {
        std::uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int d = kDimLatent + piece * 8 + 2 * j;
          w[j] = static_cast<std::uint32_t>(kv_element(seed, row, d)) |
                 (static_cast<std::uint32_t>(kv_element(seed, row, d + 1)) << 16);
        }
        *reinterpret_cast<uint4*>(dst + kFp8RopeOffset + piece * 16) = make_uint4(w[0], w[1], w[2], w[3]);
      }
      continue;
    }
    const int col0 = part * kFp8BlockValues;
    float amax = 0.0f;
#pragma unroll 4
    for (int i = 0; i < kFp8BlockValues; ++i) amax = fmaxf(amax, fabsf(bf16_bits_to_float(kv_element(seed, row, col0 + i))));
    const float scale = fp8_block_scale(amax);
#pragma unroll 1
    for (int piece = 0; piece < kFp8BlockValues / 16; ++piece) {
      std::uint32_t w[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        std::uint32_t word = 0;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const float v = bf16_bits_to_float(kv_element(seed, row, col0 + piece * 16 + 4 * j + k));
          word |= static_cast<std::uint32_t>(float_to_e4m3(v / scale)) << (8 * k);
        }
        w[j] = word;
      }
      *reinterpret_cast<uint4*>(dst + col0 + piece * 16) = make_uint4(w[0], w[1], w[2], w[3]);
    }
    *reinterpret_cast<float*>(dst + kFp8ScaleOffset + 4 * part) = scale;
  }
}

}  // namespace

const void* combine_kernel(int groups) {
  return groups == 1 ? reinterpret_cast<const void*>(&combine_kernel_impl<1>)
                     : reinterpret_cast<const void*>(&combine_kernel_impl<kCombineMaxGroups>);
}

cudaError_t launch_combine(const CombineArgs& args, unsigned grid, cudaStream_t stream) {
  const int groups = combine_groups(args.nsplit);
  // Programmatic dependent launch: the combine's launch latency overlaps the
  // split kernel's tail (sm_90 and later; both built targets have it).
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(groups * kCombineColumnThreads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = 1;
  return groups == 1 ? cudaLaunchKernelEx(&config, combine_kernel_impl<1>, args)
                     : cudaLaunchKernelEx(&config, combine_kernel_impl<kCombineMaxGroups>, args);
}

void launch_timestamps(unsigned long long* out, int multiprocessors, cudaStream_t stream) {
  timestamps_kernel<<<static_cast<unsigned>(multiprocessors), 1, 0, stream>>>(out);
}

void launch_fill_kv(void* kv, long long rows, KvDtype dtype, std::uint64_t seed, cudaStream_t stream) {
  if (dtype == KvDtype::kFp8E4m3) {
    const long long items = rows * (kFp8Blocks + 1);
    const long long blocks = (items + 255) / 256;
    fill_kv_fp8_kernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
        static_cast<std::uint8_t*>(kv), rows, seed);
    return;
  }
  const long long pieces = rows * (kDimQK / 8);
  const long long blocks = (pieces + 255) / 256;
  fill_kv_kernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
      static_cast<std::uint16_t*>(kv), rows, seed);
}

}  // namespace mla::cuda
