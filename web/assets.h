// The dashboard's static files, compiled into the binary (web/assets/ and
// uPlot from web/node_modules). Lookup is by exact relative path in a fixed
// table: nothing is ever read from the file system, so no request path can
// reach a file outside this set.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace perfwatch::web {

struct Asset {
  std::string_view content;
  std::string_view content_type;
  std::string etag;  // a strong validator: a hash of the content, quoted
};

// `path` relative to /assets/: "app.js", "vendor/uPlot.iife.min.js"; nullopt
// for anything not in the set.
std::optional<Asset> find_asset(std::string_view path);

}  // namespace perfwatch::web
