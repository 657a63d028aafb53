// MLA_HOT marks the few functions whose loops carry the CPU time. The bench
// binary travels between machines, so it is compiled for the baseline ISA;
// these functions are cloned for AVX2+FMA (x86-64-v3) and AVX-512
// (x86-64-v4), and the loader picks the clone the CPU supports (GCC's
// function multiversioning). Elsewhere they compile once, for the target.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(MLA_NO_CLONES)
#define MLA_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define MLA_HAVE_CLONES 1
#else
#define MLA_HOT
#define MLA_HAVE_CLONES 0
#endif

// For helpers called from MLA_HOT functions: GCC does not inline a plain
// function into a clone built for another -march on its own, and a call
// would run the helper with the baseline ISA.
#if defined(__GNUC__)
#define MLA_INLINE inline __attribute__((always_inline))
#else
#define MLA_INLINE inline
#endif

namespace mla::cpu {

// Which instruction set the MLA_HOT functions run with on this CPU.
const char* simd_level();

}  // namespace mla::cpu
