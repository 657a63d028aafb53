#include "host_info.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace mla::host {
namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "32768K" -> 33554432; "" or junk -> 0.
long long parse_size(const std::string& text) {
  std::istringstream in(text);
  long long value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  in >> unit;
  if (unit == 'K') value <<= 10;
  if (unit == 'M') value <<= 20;
  if (unit == 'G') value <<= 30;
  return value;
}

}  // namespace

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "unknown CPU" : line.substr(start);
  }
  return "unknown CPU";
}

CacheSize last_level_cache() {
  CacheSize best;
  int best_level = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level");
    if (level.empty()) continue;
    const int lv = std::atoi(level.c_str());
    const long long bytes = parse_size(read_line(dir + "size"));
    if (bytes > 0 && lv >= 2 && (lv > best_level || (lv == best_level && bytes > best.bytes))) {
      best_level = lv;
      best.bytes = bytes;
      best.source = "sysfs level " + level;
    }
  }
  if (best.bytes == 0) best = {32LL << 20, "assumed 32 MiB (sysfs does not list the caches)"};
  return best;
}

long long memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long long kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib << 10;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

}  // namespace mla::host
