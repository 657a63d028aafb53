// Tuning constants of the CPU backend that are not variant parameters:
// changing one is a source change that rebuilds the bench, as a kernel
// engineer's tuning commit does. (perfwatch's demo history, in
// scripts/demo_repo.sh, replays a commit that flips one and its revert.)
#pragma once

namespace mla::cpu::tuning {

// The widest vectors, in floats, that the split-KV tile kernel may use:
// 16 (AVX-512), 8 (AVX2 + FMA) or 4 (SSE2). At run time the widest kernel
// the CPU supports up to this limit is picked; narrower is correct but slower.
inline constexpr int kMaxVectorFloats = 16;

}  // namespace mla::cpu::tuning
