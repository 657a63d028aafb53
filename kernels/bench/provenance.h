// How this bench binary was built, so a result names the exact build that
// produced it (stale builds have misled the users before).
#pragma once

#include <cstdint>
#include <string>

#include "lines.h"

namespace mla::bench {

// The build id: git revision at build time, build type, compiler, flags and
// CUDA architectures; plus the hash of the running executable.
BuildInfo build_info();

// FNV-1a 64 of a file's bytes as "fnv1a64:<16 hex digits>"; empty when the
// file cannot be read.
std::string fnv1a64_of_file(const std::string& path);

}  // namespace mla::bench
