#include "adapters/host.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include <openssl/evp.h>

#include "adapters/text.h"

namespace perfwatch::adapters {

namespace fs = std::filesystem;

namespace {

std::string read_small_file(const fs::path& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string hex(const unsigned char* bytes, unsigned len) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 15]);
  }
  return out;
}

// RAII for an OpenSSL digest context.
struct DigestContext {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~DigestContext() { EVP_MD_CTX_free(ctx); }
};

}  // namespace

HostFacts host_facts() {
  HostFacts f;
  char name[256] = {};
  f.host_name = ::gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "unknown host";
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  f.num_cpus = cpus > 0 ? static_cast<int>(cpus) : 0;

  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line) && (f.cpu_model.empty() || f.cpu_mhz == 0)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" && f.cpu_model.empty()) f.cpu_model = value;
    if (key == "cpu MHz" && f.cpu_mhz == 0) f.cpu_mhz = parse_number(value).value_or(0);
  }

  const fs::path cache_dir = "/sys/devices/system/cpu/cpu0/cache";
  std::map<std::string, std::string> caches;  // sorted by "index<N>"
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache_dir, ec)) {
    const std::string dir = entry.path().filename().string();
    if (dir.rfind("index", 0) != 0) continue;
    std::string level = read_small_file(entry.path() / "level");
    std::string type = read_small_file(entry.path() / "type");
    std::string size = read_small_file(entry.path() / "size");
    if (level.empty() || size.empty()) continue;
    std::string kind = type == "Data" ? "d" : type == "Instruction" ? "i" : "";
    if (size.back() == 'K') size = size.substr(0, size.size() - 1) + " KiB";
    caches[dir] = "L" + level + kind + " " + size;
  }
  for (const auto& [_, text] : caches) f.caches += (f.caches.empty() ? "" : ", ") + text;
  return f;
}

nlohmann::json host_device(const HostFacts& facts) {
  nlohmann::json device = {{"name", facts.host_name}};
  if (facts.num_cpus > 0) device["multiprocessors"] = facts.num_cpus;
  nlohmann::json extra = nlohmann::json::object();
  if (!facts.cpu_model.empty()) extra["cpu_model"] = facts.cpu_model;
  if (facts.cpu_mhz > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", facts.cpu_mhz);
    extra["cpu_mhz"] = buf;
  }
  if (!facts.caches.empty()) extra["caches"] = facts.caches;
  if (!extra.empty()) device["extra"] = extra;
  return device;
}

Result<std::string> sha256_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(io_error(path.string(), "cannot be read"));
  DigestContext d;
  if (d.ctx == nullptr || EVP_DigestInit_ex(d.ctx, EVP_sha256(), nullptr) != 1)
    return fail(Error{ErrorCode::kInternal, "sha256", "OpenSSL could not start a digest"});
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(d.ctx, buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return fail(io_error(path.string(), "read failed"));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(d.ctx, digest, &len);
  return "sha256:" + hex(digest, len);
}

std::string sha256_text(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  return "sha256:" + hex(digest, len);
}

std::optional<fs::path> find_program(const std::string& word, const fs::path& workdir) {
  auto executable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (word.empty()) return std::nullopt;
  if (word.find('/') != std::string::npos) {
    fs::path p = fs::path(word).is_absolute() ? fs::path(word) : workdir / word;
    if (executable(p)) return p.lexically_normal();
    return std::nullopt;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    fs::path dir = path.substr(start, end - start);
    if (dir.empty()) dir = workdir;  // an empty PATH entry is the current directory
    else if (dir.is_relative()) dir = workdir / dir;
    if (executable(dir / word)) return (dir / word).lexically_normal();
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace perfwatch::adapters
