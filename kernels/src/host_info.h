// What the CPU backend reports about the machine it runs on (Linux /proc and
// /sys; sensible fallbacks elsewhere).
#pragma once

#include <string>

namespace mla::host {

// "model name" of /proc/cpuinfo, or "unknown CPU".
std::string cpu_model();

struct CacheSize {
  long long bytes = 0;
  std::string source;  // where the figure came from
};
// The last-level cache: the largest level-3 (else level-2) cache of cpu0 in
// /sys; 32 MiB when the system does not say.
CacheSize last_level_cache();

// MemTotal of /proc/meminfo in bytes; 0 when unknown.
long long memory_bytes();

}  // namespace mla::host
