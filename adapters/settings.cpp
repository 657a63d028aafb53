#include "adapters/settings.h"

#include <cstdio>

#include "schemas/schema.h"

namespace perfwatch::adapters {

using nlohmann::json;

namespace {

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

Result<BenchSettings> parse_bench_settings(std::string_view text, std::string_view where) {
  const std::string origin(where);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return fail(invalid_argument(origin, "must hold the manifest's bench object as JSON"));

  // The schema describes a whole manifest; wrap the bench object in the
  // smallest one so that its errors name the manifest field (bench.<...>).
  json manifest = {{"schema_version", 2},
                   {"paths", {"."}},
                   {"bench", doc},
                   {"variants", {{{"name", "v"}, {"params", json::object()}}}},
                   {"sweep", {{"axes", {{"x", {1}}}}}}};
  auto schema = schemas::Schema::load("manifest.v2.schema.json");
  if (!schema) return fail(schema.error());
  if (auto ok = schema->validate(manifest, origin); !ok) return fail(ok.error());

  BenchSettings s;
  s.doc = doc;
  s.adapter = doc.value("adapter", "");
  s.command = doc["command"].get<std::string>();
  if (doc.contains("env"))
    for (const auto& [k, v] : doc["env"].items()) s.env[k] = v.get<std::string>();
  s.idle_timeout_s = doc.value("idle_timeout_s", 300.0);
  if (doc.contains("trial_timeout_s")) {
    s.trial_timeout_s = doc["trial_timeout_s"].get<double>();
    if (s.trial_timeout_s >= s.idle_timeout_s)
      return fail(invalid_argument(origin + ": bench.trial_timeout_s",
                                   "must be below bench.idle_timeout_s (" + seconds(s.idle_timeout_s) +
                                       " s): the runner would count the adapter as hung before it could report "
                                       "the stuck program"));
  } else {
    s.trial_timeout_s = 0.9 * s.idle_timeout_s;
  }
  std::error_code ec;
  s.workdir = std::filesystem::current_path(ec);
  return s;
}

}  // namespace perfwatch::adapters
