#include "runner/manifest.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/text.h"
#include "schemas/schema.h"

namespace perfwatch::runner {

using nlohmann::json;

const VariantSpec& Manifest::baseline() const {
  for (const auto& v : variants) {
    if (v.baseline) return v;
  }
  return variants.front();  // parse_manifest guarantees one is marked
}

std::string point_id(int batch, int heads, int topk, const std::string& dtype) {
  return "b" + std::to_string(batch) + "_h" + std::to_string(heads) + "_k" + std::to_string(topk) + "_" + dtype;
}

namespace {

template <class T>
T value_or(const json& object, const char* key, T fallback) {
  auto it = object.find(key);
  return it == object.end() ? fallback : it->get<T>();
}

// A field whose value the parser refuses after the schema accepted it.
struct FieldError {
  Error error;
};

// An integer field that must fit an int. The schema bounds some integers and
// not others, and nlohmann's get<int>() would wrap 1e12 silently.
int int_or(const json& object, const char* key, int fallback, const std::string& field) {
  auto it = object.find(key);
  if (it == object.end()) return fallback;
  constexpr auto kMax = std::numeric_limits<int>::max();
  const bool fits = it->is_number_unsigned()  ? it->get<std::uint64_t>() <= static_cast<std::uint64_t>(kMax)
                    : it->is_number_integer() ? it->get<std::int64_t>() >= std::numeric_limits<int>::min() &&
                                                    it->get<std::int64_t>() <= kMax
                    : it->is_number_float()   ? it->get<double>() >= std::numeric_limits<int>::min() &&
                                                  it->get<double>() <= kMax
                                              : false;
  if (!fits) throw FieldError{invalid_argument(field, json_text(*it) + " is out of range (at most " + std::to_string(kMax) + ")")};
  return it->is_number_float() ? static_cast<int>(it->get<double>()) : static_cast<int>(it->get<std::int64_t>());
}

std::vector<int> int_list(const json& sweep, const char* key, std::vector<int> fallback) {
  auto it = sweep.find(key);
  return it == sweep.end() ? fallback : it->get<std::vector<int>>();
}

Result<Manifest> read_fields(const json& doc, const std::string& where);

// A workdir is a relative path that stays inside the checkout, whatever the
// checkout's contents (symlinks are checked again in resolve_workdir).
Status check_workdir(const std::string& workdir, const std::string& field) {
  std::filesystem::path p(workdir);
  if (workdir.empty()) return fail(invalid_argument(field, "must not be empty (use \".\" for the checkout's root)"));
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory())
    return fail(invalid_argument(field, "'" + workdir + "' is absolute; give a path relative to the checkout's root"));
  for (const auto& part : p) {
    if (part == "..") return fail(invalid_argument(field, "'" + workdir + "' contains '..'; it must stay inside the checkout"));
  }
  return {};
}

}  // namespace

Result<std::filesystem::path> resolve_workdir(const std::filesystem::path& checkout, const std::string& workdir,
                                              const std::string& field) {
  namespace fs = std::filesystem;
  if (auto ok = check_workdir(workdir, field); !ok) return fail(ok.error());
  std::error_code ec;
  fs::path root = fs::weakly_canonical(checkout, ec);
  if (ec) return fail(io_error(checkout.string(), "cannot resolve the checkout: " + ec.message()));
  fs::path dir = fs::weakly_canonical(checkout / workdir, ec);
  if (ec) return fail(invalid_argument(field, "'" + workdir + "': cannot resolve: " + ec.message()));
  // Component-wise prefix test: /a/bc is not inside /a/b.
  auto [root_end, dir_at] = std::mismatch(root.begin(), root.end(), dir.begin(), dir.end());
  if (root_end != root.end())
    return fail(invalid_argument(field, "'" + workdir + "' resolves to " + dir.string() + ", outside the checkout " +
                                            root.string() + " (a symlink leads out)"));
  if (!fs::is_directory(dir, ec))
    return fail(invalid_argument(field, "'" + workdir + "': no such directory in the checkout (" + dir.string() + ")"));
  return dir;
}

Result<Manifest> parse_manifest(const json& doc, const std::string& where) {
  auto schema = schemas::Schema::load("manifest.schema.json");
  if (!schema) return fail(schema.error());
  if (auto ok = schema->validate(doc, where); !ok) return fail(ok.error());
  // The schema has checked every type, so a JSON exception here is a gap
  // between the schema and this parser: an error about the manifest, never
  // an exception through the daemon.
  try {
    return read_fields(doc, where);
  } catch (const FieldError& e) {
    return fail(e.error);
  } catch (const json::exception& e) {
    return fail(invalid_argument(where, std::string("does not fit what perfwatch reads: ") + e.what()));
  }
}

namespace {

Result<Manifest> read_fields(const json& doc, const std::string& where) {
  Manifest m;
  m.source = doc;
  m.name = value_or<std::string>(doc, "name", "");

  const json& build = doc["build"];
  m.build.command = build["command"].get<std::string>();
  m.build.workdir = value_or<std::string>(build, "workdir", ".");
  m.build.timeout_s = value_or<double>(build, "timeout_s", 1800);

  m.paths = doc["paths"].get<std::vector<std::string>>();

  const json& bench = doc["bench"];
  m.bench.command = bench["command"].get<std::string>();
  m.bench.workdir = value_or<std::string>(bench, "workdir", ".");
  m.bench.timeout_s = value_or<double>(bench, "timeout_s", 3600);
  m.bench.idle_timeout_s = value_or<double>(bench, "idle_timeout_s", 300);
  m.bench.backend = value_or<std::string>(bench, "backend", "auto");
  m.bench.env = value_or<std::map<std::string, std::string>>(bench, "env", {});
  m.bench.record_env = value_or<std::vector<std::string>>(bench, "record_env", {});
  m.bench.threads = int_or(bench, "threads", 0, where + ": bench.threads");
  if (auto ok = check_workdir(m.build.workdir, where + ": build.workdir"); !ok) return fail(ok.error());
  if (auto ok = check_workdir(m.bench.workdir, where + ": bench.workdir"); !ok) return fail(ok.error());

  std::set<std::string> names;
  int baselines = 0;
  for (size_t i = 0; i < doc["variants"].size(); ++i) {
    const json& v = doc["variants"][i];
    VariantSpec spec;
    spec.name = v["name"].get<std::string>();
    spec.params = v["params"];
    spec.baseline = value_or<bool>(v, "baseline", false);
    spec.hypothesis = value_or<std::string>(v, "hypothesis", "");
    std::string field = "variants[" + std::to_string(i) + "]";
    if (!names.insert(spec.name).second) {
      return fail(invalid_argument(where + ": " + field + ".name", "'" + spec.name + "' is used by an earlier variant; names must be unique"));
    }
    if (spec.baseline && ++baselines > 1) {
      return fail(invalid_argument(where + ": " + field + ".baseline", "only one variant can be the baseline"));
    }
    m.variants.push_back(std::move(spec));
  }
  if (baselines == 0) {
    if (m.variants.size() > 1) {
      return fail(invalid_argument(where + ": variants", "mark one variant with \"baseline\": true"));
    }
    m.variants.front().baseline = true;
  }

  const json& sweep = doc["sweep"];
  auto batches = int_list(sweep, "batch", {1, 8, 48, 64, 80, 96});
  auto heads = int_list(sweep, "heads", {16});
  auto topks = int_list(sweep, "topk", {2048});
  auto dtypes = value_or<std::vector<std::string>>(sweep, "dtype", {"bf16"});
  for (const auto& dtype : dtypes) {
    for (int k : topks) {
      for (int h : heads) {
        for (int b : batches) {
          std::string id = point_id(b, h, k, dtype);
          for (const auto& existing : m.points) {
            if (existing.id == id) return fail(invalid_argument(where + ": sweep", "point " + id + " appears twice; remove the repeated value"));
          }
          m.points.push_back({id, b, h, k, dtype});
        }
      }
    }
  }

  const json trials = doc.value("trials", json::object());
  m.trials.min = int_or(trials, "min", 5, where + ": trials.min");
  m.trials.max = int_or(trials, "max", 30, where + ": trials.max");
  m.trials.target_rel_ci = value_or<double>(trials, "target_rel_ci", 0.01);
  m.trials.budget_s = value_or<double>(trials, "budget_s", 20);
  m.trials.min_trial_ms = value_or<double>(trials, "min_trial_ms", 20);
  m.trials.warmup_ms = value_or<double>(trials, "warmup_ms", 50);
  if (m.trials.min > m.trials.max) {
    return fail(invalid_argument(where + ": trials.min", "is " + std::to_string(m.trials.min) + ", more than trials.max (" + std::to_string(m.trials.max) + ")"));
  }

  const json check = doc.value("check", json::object());
  m.check.max_rel_l2_o = value_or<double>(check, "max_rel_l2_o", 0.01);
  m.check.max_abs_lse = value_or<double>(check, "max_abs_lse", 0.001);
  m.check.masked_fraction = value_or<double>(check, "masked_fraction", 0.1);

  const json metric = doc.value("metric", json::object());
  m.metric.name = value_or<std::string>(metric, "name", std::string(schemas::kDefaultMetric));
  Direction natural = m.metric.name == schemas::kDefaultMetric ? Direction::kLowerIsBetter : Direction::kHigherIsBetter;
  if (auto it = metric.find("direction"); it != metric.end()) {
    Direction given = *it == "lower_is_better" ? Direction::kLowerIsBetter : Direction::kHigherIsBetter;
    if (given != natural) {
      return fail(invalid_argument(where + ": metric.direction", m.metric.name + std::string(" is ") +
                                       (natural == Direction::kLowerIsBetter ? "lower_is_better" : "higher_is_better")));
    }
  }
  m.metric.direction = natural;

  const json runs = doc.value("runs", json::object());
  m.runs.per_commit = int_or(runs, "per_commit", schemas::kDefaultRunsPerCommit, where + ": runs.per_commit");
  m.runs.max_per_commit = int_or(runs, "max_per_commit", schemas::kDefaultMaxRunsPerCommit, where + ": runs.max_per_commit");
  m.runs.interleave_baseline = value_or<bool>(runs, "interleave_baseline", false);
  m.runs.pinned_baseline = value_or<std::string>(runs, "pinned_baseline", "");
  if (m.runs.per_commit > m.runs.max_per_commit) {
    return fail(invalid_argument(where + ": runs.per_commit", "is more than runs.max_per_commit"));
  }

  const json noise = doc.value("noise", json::object());
  m.default_band = value_or<double>(noise, "default_band", schemas::kDefaultBandRel);
  return m;
}

}  // namespace

Result<Manifest> load_manifest(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return fail(not_found(path.string(), "cannot read the manifest"));
  std::stringstream text;
  text << in.rdbuf();
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const json::parse_error& e) {
    return fail(invalid_argument(path.string(), std::string("not valid JSON: ") + e.what()));
  }
  return parse_manifest(doc, path.string());
}

}  // namespace perfwatch::runner
