// gather_probe: the bandwidth ceiling of the decode's memory access alone.
// Gathers the users' B = 96 x topk 2048 random 1152-byte KV rows (each batch
// element from its own 8192-row region, two input sets in rotation, 1.8 GB)
// into shared memory with the kernel's cp.async pipeline, and does nothing
// else, for a few pipeline shapes and grid sizes. Prints one line a shape and
// the best, in TB/s of gathered rows. Not part of the build: h200_bench.sh
// compiles it with nvcc on the GPU machine.
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
constexpr int kRowBytes = 1152, kPieces = kRowBytes / 16, kRowStride = kRowBytes + 16;

__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
}

// CTA i gathers rows [i * total / ctas, (i + 1) * total / ctas) of the
// flattened (b, token) list, Rows rows a stage, Stages stages deep, 8 threads
// a row.
template <int Threads, int Rows, int Stages>
__global__ void __launch_bounds__(Threads) gather(const unsigned char* pool, const int* idx, int total, unsigned* sink) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, row = tid / 8, piece = tid % 8;
  const int first = static_cast<int>(static_cast<long long>(blockIdx.x) * total / gridDim.x);
  const int count = static_cast<int>(static_cast<long long>(blockIdx.x + 1) * total / gridDim.x) - first;
  const int tiles = (count + Rows - 1) / Rows;
  auto issue = [&](int t) {
    if (t < tiles) {
      unsigned char* dst = smem + (t % Stages) * Rows * kRowStride;
      for (int r = row; r < Rows && t * Rows + r < count; r += Threads / 8) {
        const unsigned char* src = pool + static_cast<long long>(idx[first + t * Rows + r]) * kRowBytes;
        for (int p = piece; p < kPieces; p += 8) cp_async16(dst + r * kRowStride + p * 16, src + p * 16);
      }
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };
  for (int s = 0; s < Stages - 1; ++s) issue(s);
  unsigned acc = 0;
  for (int t = 0; t < tiles; ++t) {
    __syncthreads();
    issue(t + Stages - 1);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Stages - 1) : "memory");
    __syncthreads();
    acc ^= reinterpret_cast<const unsigned*>(smem + (t % Stages) * Rows * kRowStride)[tid];
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;  // keeps the reads observable
}

template <int Threads, int Rows, int Stages>
double run(const unsigned char* pool, const int* const* idx, int ctas, unsigned* sink, int sms) {
  const int total = kB * kTopk;
  const int smem = Stages * Rows * kRowStride;
  auto fn = gather<Threads, Rows, Stages>;
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
  const double tbs = static_cast<double>(total) * kRowBytes / (us * 1e-6) / 1e12;
  std::printf("gather threads=%d rows=%d stages=%d ctas=%d (%d/SM fit, %.2f waves): %.1f us, %.2f TB/s\n", Threads,
              Rows, Stages, ctas, per_sm, static_cast<double>(ctas) / (per_sm * sms), us, tbs);
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return tbs;
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long long rows = static_cast<long long>(kSets) * kB * kCtx;
  unsigned char* pool = nullptr;
  CHECK(cudaMalloc(&pool, rows * kRowBytes));
  CHECK(cudaMemset(pool, 0x3c, rows * kRowBytes));
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
  double best = 0;
  // Grids of 96 x nsplit CTAs, as the split kernel launches them (nsplit 1, 2, 3, 4, 11).
  for (int ctas : {96, 192, 288, 384, 1056}) {
    best = std::max(best, run<128, 16, 2>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<128, 16, 3>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<128, 32, 2>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<128, 32, 3>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<128, 64, 2>(pool, idx, ctas, sink, sms));
    best = std::max(best, run<256, 64, 3>(pool, idx, ctas, sink, sms));
  }
  std::printf("gather best: %.2f TB/s\n", best);
  return 0;
}
