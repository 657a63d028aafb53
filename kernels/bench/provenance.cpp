#include "provenance.h"

#include <cstdio>
#include <vector>

#include "build_config.h"
#include "git_revision.h"

namespace mla::bench {

std::string fnv1a64_of_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::vector<unsigned char> buffer(1 << 16);
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0)
    for (std::size_t i = 0; i < n; ++i) h = (h ^ buffer[i]) * 0x100000001b3ull;
  const bool ok = !std::ferror(f);
  std::fclose(f);
  if (!ok) return "";
  char text[40];
  std::snprintf(text, sizeof text, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return text;
}

BuildInfo build_info() {
  BuildInfo b;
  b.compiler = MLA_BUILD_COMPILER;
  b.cuda_compiler = MLA_BUILD_CUDA_COMPILER;
  b.cuda_archs = MLA_BUILD_CUDA_ARCHS;
  b.flags = MLA_BUILD_FLAGS;
  b.id = std::string("git ") + MLA_GIT_REVISION + ", " + MLA_BUILD_TYPE + ", " + b.compiler + " " + b.flags;
  if (!b.cuda_archs.empty()) b.id += ", " + b.cuda_compiler + " archs " + b.cuda_archs;
  b.binary_hash = fnv1a64_of_file("/proc/self/exe");
  return b;
}

}  // namespace mla::bench
