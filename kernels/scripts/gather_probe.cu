// gather_probe: the bandwidth ceiling of the decode's memory access alone.
// Gathers the users' B = 96 x topk 2048 random KV rows (each batch element
// from its own 8192-row region, two input sets in rotation) into shared
// memory and does nothing else, for a few pipeline shapes and grid sizes:
// rows of 1152 bytes (bf16, 1.8 GB) and 656 bytes (fp8, 1.0 GB), each landed
// as the split kernel's default gather does (16-byte cp.async pieces, 8
// threads a row, wait_group a stage) and as its bulk gather does (one
// cp.async.bulk a row, an mbarrier a stage; cuda_tuning.h's kBulkGather).
// Prints one line a shape, the best of each (row bytes, copy) pair, and
// last "gather best" (1152-byte rows, cp.async: the figure BENCHMARKS.md's
// roofline quotes), in TB/s of gathered rows. Not part of the build:
// h200_bench.sh compiles it with nvcc on the GPU machine (sm_90).
//
// usage: gather_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "gather_probe: %s: %s\n", #call, cudaGetErrorString(e_));         \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

constexpr int kB = 96, kTopk = 2048, kCtx = 8192, kSets = 2;

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void bulk_row(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
  if (bytes)
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}
__device__ __forceinline__ void wait_parity(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
  } while (!done);
}

// Landed row stride: bf16 rows padded by 16 bytes as the kernel pads them;
// fp8 rows as they are (656 = 16 mod 128).
__host__ __device__ constexpr int row_stride(int row_bytes) { return row_bytes == 1152 ? row_bytes + 16 : row_bytes; }

// CTA i gathers rows [i * total / ctas, (i + 1) * total / ctas) of the
// flattened (b, token) list, Rows rows a stage, Stages stages deep: with
// cp.async 8 threads a row, 16 bytes a piece; with Bulk one thread a row.
template <int RowBytes, bool Bulk, int Threads, int Rows, int Stages>
__global__ void __launch_bounds__(Threads) gather(const unsigned char* pool, const int* idx, int total, unsigned* sink) {
  constexpr int kStride = row_stride(RowBytes), kPieces = RowBytes / 16;
  static_assert(!Bulk || Rows <= Threads, "bulk: one thread a row");
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[Stages];
  const int tid = threadIdx.x, row = tid / 8, piece = tid % 8;
  const int first = static_cast<int>(static_cast<long long>(blockIdx.x) * total / gridDim.x);
  const int count = static_cast<int>(static_cast<long long>(blockIdx.x + 1) * total / gridDim.x) - first;
  const int tiles = (count + Rows - 1) / Rows;
  if (Bulk) {
    if (tid == 0) {
      for (int s = 0; s < Stages; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bars + s)), "r"(Rows) : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
  }
  auto issue = [&](int t) {
    if (t < tiles) {
      unsigned char* dst = smem + (t % Stages) * Rows * kStride;
      if (Bulk) {
        if (tid < Rows) {
          const bool ok = t * Rows + tid < count;
          const unsigned char* src = pool + static_cast<long long>(ok ? idx[first + t * Rows + tid] : 0) * RowBytes;
          bulk_row(dst + tid * kStride, src, ok ? RowBytes : 0, bars + t % Stages);
        }
      } else {
        for (int r = row; r < Rows && t * Rows + r < count; r += Threads / 8) {
          const unsigned char* src = pool + static_cast<long long>(idx[first + t * Rows + r]) * RowBytes;
          for (int p = piece; p < kPieces; p += 8) cp_async16(dst + r * kStride + p * 16, src + p * 16);
        }
      }
    }
    if (!Bulk) asm volatile("cp.async.commit_group;\n" ::: "memory");
  };
  for (int s = 0; s < Stages - 1; ++s) issue(s);
  unsigned acc = 0;
  for (int t = 0; t < tiles; ++t) {
    __syncthreads();
    issue(t + Stages - 1);
    if (Bulk)
      wait_parity(bars + t % Stages, static_cast<unsigned>(t / Stages) & 1u);
    else
      asm volatile("cp.async.wait_group %0;\n" ::"n"(Stages - 1) : "memory");
    __syncthreads();
    acc ^= reinterpret_cast<const unsigned*>(smem + (t % Stages) * Rows * kStride)[tid];
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;  // keeps the reads observable
}

template <int RowBytes, bool Bulk, int Threads, int Rows, int Stages>
double run(const unsigned char* pool, const int* const* idx, int ctas, unsigned* sink, int sms) {
  const int total = kB * kTopk;
  const int smem = Stages * Rows * row_stride(RowBytes);
  auto fn = gather<RowBytes, Bulk, Threads, Rows, Stages>;
  CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, Threads, smem));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 4; ++i) fn<<<ctas, Threads, smem>>>(pool, idx[i % kSets], total, sink);
  CHECK(cudaGetLastError());
  const int reps = 20;
  CHECK(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) fn<<<ctas, Threads, smem>>>(pool, idx[i % kSets], total, sink);
  CHECK(cudaEventRecord(b));
  CHECK(cudaEventSynchronize(b));
  CHECK(cudaGetLastError());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  const double us = ms * 1000.0 / reps;
  const double tbs = static_cast<double>(total) * RowBytes / (us * 1e-6) / 1e12;
  std::printf("gather rows=%dB copy=%s threads=%d rows=%d stages=%d ctas=%d (%d/SM fit, %.2f waves): %.1f us, %.2f TB/s\n",
              RowBytes, Bulk ? "bulk" : "cp.async", Threads, Rows, Stages, ctas, per_sm,
              static_cast<double>(ctas) / (per_sm * sms), us, tbs);
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return tbs;
}

// Every shape at every grid of 96 x nsplit CTAs, as the split kernel
// launches them (nsplit 1, 2, 3, 4, 11); the best TB/s.
template <int RowBytes, bool Bulk>
double sweep(const unsigned char* pool, const int* const* idx, unsigned* sink, int sms) {
  double best = 0;
  for (int ctas : {96, 192, 288, 384, 1056}) {
    best = std::max(best, run<RowBytes, Bulk, 128, 16, 2>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<RowBytes, Bulk, 128, 16, 3>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<RowBytes, Bulk, 128, 32, 2>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<RowBytes, Bulk, 128, 32, 3>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<RowBytes, Bulk, 128, 64, 2>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<RowBytes, Bulk, 256, 64, 3>(pool, idx, ctas, sink, sms));
  }
  std::printf("gather best rows=%dB copy=%s: %.2f TB/s\n", RowBytes, Bulk ? "bulk" : "cp.async", best);
  return best;
}

// A pool of rows of `row_bytes` (every byte 0x3c) and kSets index lists.
unsigned char* make_pool(int row_bytes) {
  const long long rows = static_cast<long long>(kSets) * kB * kCtx;
  unsigned char* pool = nullptr;
  CHECK(cudaMalloc(&pool, rows * row_bytes));
  CHECK(cudaMemset(pool, 0x3c, rows * row_bytes));
  return pool;
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::mt19937 rng(12345);
  int* idx[kSets];
  std::vector<int> region(kCtx), host(static_cast<std::size_t>(kB) * kTopk);
  for (int s = 0; s < kSets; ++s) {
    for (int b = 0; b < kB; ++b) {
      std::iota(region.begin(), region.end(), 0);
      std::shuffle(region.begin(), region.end(), rng);
      for (int j = 0; j < kTopk; ++j) host[b * kTopk + j] = (s * kB + b) * kCtx + region[j];
    }
    CHECK(cudaMalloc(&idx[s], host.size() * sizeof(int)));
    CHECK(cudaMemcpy(idx[s], host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
  }
  unsigned* sink = nullptr;
  CHECK(cudaMalloc(&sink, 1 << 20));
  unsigned char* pool = make_pool(656);
  sweep<656, false>(pool, idx, sink, sms);
  sweep<656, true>(pool, idx, sink, sms);
  CHECK(cudaFree(pool));
  pool = make_pool(1152);
  sweep<1152, true>(pool, idx, sink, sms);
  const double best = sweep<1152, false>(pool, idx, sink, sms);
  std::printf("gather best: %.2f TB/s\n", best);
  return 0;
}
