// What an adapter can say about where it runs and what it runs, for the
// header line: the host (an adapter sees the benchmarked program only from the
// outside, so the machine is the device it can name), and the hash of a
// program's file (the build id).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace perfwatch::adapters {

// The facts Google Benchmark's own context reports (host_name, num_cpus,
// mhz_per_cpu, caches), read from the same places: gethostname,
// /proc/cpuinfo, /sys/devices/system/cpu/cpu0/cache. Missing facts stay empty.
struct HostFacts {
  std::string host_name;   // never empty: "unknown host" when gethostname fails
  std::string cpu_model;   // "AMD EPYC 7B13"
  int num_cpus = 0;        // online CPUs
  double cpu_mhz = 0;      // of the first CPU, as /proc/cpuinfo says at this moment
  std::string caches;      // "L1d 32 KiB, L1i 32 KiB, L2 512 KiB, L3 32768 KiB"
};
HostFacts host_facts();

// header.device for an adapter: name = the host's name; multiprocessors =
// CPUs; extra = cpu_model, cpu_mhz, caches (what is known).
nlohmann::json host_device(const HostFacts& facts);

// "sha256:<64 hex>" of the file's bytes. Fails (kIo, where = the path) when
// it cannot be read.
Result<std::string> sha256_file(const std::filesystem::path& path);

// "sha256:<64 hex>" of a string.
std::string sha256_text(const std::string& text);

// Resolves a program as the shell would: a word with a '/' is a path
// (relative to workdir), any other is looked up on PATH. nullopt when there
// is no such executable file.
std::optional<std::filesystem::path> find_program(const std::string& word, const std::filesystem::path& workdir);

}  // namespace perfwatch::adapters
