// The PTX the split kernel is built from, one instruction (or a fixed short
// sequence) per function: asynchronous copies, ldmatrix, the bf16 and fp16
// MMAs, the conversions. sm_80 instructions except cvt from e4m3 (sm_89) and
// the bulk copy with its mbarrier (sm_90, for the bulk gather of
// cuda_tuning.h), so the same code runs on sm_90 and sm_120.
#pragma once

#include <cstdint>

namespace mla::cuda::device {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared; src_bytes = 0 writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// The bulk gather (one copy a row, completing on a shared-memory mbarrier).
// init: `count` arrivals complete a phase; the fence makes the initialised
// barrier visible to the copy engine before any copy names it.
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One arrival that also announces `bytes` more to come from copies on this barrier.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
// `bytes` (a multiple of 16, both addresses 16-byte aligned) global -> shared
// by the copy engine; completes `bytes` of the barrier's transaction count.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}
// Spins until the barrier's phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "  selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
// Orders this thread's ordinary shared-memory stores before later copy-engine
// writes to the same bytes.
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// d += a . b, m16n8k16, bf16 inputs, fp32 accumulators.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// d += a . b, m16n8k16, fp16 inputs, fp32 accumulators (the fp8 cache's
// products: e4m3 converts to fp16 exactly).
__device__ __forceinline__ void mma_f16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Round-to-nearest-even pair of floats -> packed bf16x2 (lo in the low half).
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ std::uint16_t to_bf16(float x) {
  return static_cast<std::uint16_t>(pack_bf16x2(x, 0.f) & 0xFFFFu);
}

// Round-to-nearest-even pair of floats -> packed f16x2 (lo in the low half).
__device__ __forceinline__ std::uint32_t pack_f16x2(float lo, float hi) {
  std::uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// a * b, f16x2, round to nearest even.
__device__ __forceinline__ std::uint32_t hmul2(std::uint32_t a, std::uint32_t b) {
  std::uint32_t r;
  asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

// Four e4m3 values (the bytes of `four`, lowest first) -> two packed f16x2
// (values 0, 1 in lo; 2, 3 in hi), exactly, one cvt a pair (e4m3's 4
// significant bits and exponents 2^-9..2^8 fit fp16).
__device__ __forceinline__ void e4m3x4_to_f16x4(std::uint32_t four, std::uint32_t& lo, std::uint32_t& hi) {
  asm("{\n"
      "  .reg .b16 p01, p23;\n"
      "  mov.b32 {p01, p23}, %2;\n"
      "  cvt.rn.f16x2.e4m3x2 %0, p01;\n"
      "  cvt.rn.f16x2.e4m3x2 %1, p23;\n"
      "}\n"
      : "=r"(lo), "=r"(hi)
      : "r"(four));
}

inline constexpr float kNegInf = -__builtin_huge_valf();

}  // namespace mla::cuda::device
