#include "web/assets.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace perfwatch::embedded {
std::optional<std::string_view> web_assets(std::string_view path);
std::optional<std::string_view> web_vendor(std::string_view path);
}  // namespace perfwatch::embedded

namespace perfwatch::web {

namespace {

std::string_view content_type_of(std::string_view path) {
  auto ends = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.substr(path.size() - suffix.size()) == suffix;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

std::string etag_of(std::string_view content) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a, 64 bits
  for (unsigned char c : content) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::optional<Asset> find_asset(std::string_view path) {
  constexpr std::string_view kVendor = "vendor/";
  std::optional<std::string_view> content;
  if (path.substr(0, kVendor.size()) == kVendor)
    content = embedded::web_vendor(path.substr(kVendor.size()));
  else
    content = embedded::web_assets(path);
  if (!content) return std::nullopt;
  return Asset{*content, content_type_of(path), etag_of(*content)};
}

}  // namespace perfwatch::web
