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

const MetricSpec* Manifest::find_metric(const std::string& metric) const {
  for (const auto& m : metrics)
    if (m.name == metric) return &m;
  return nullptr;
}

const PointSpec* Manifest::find_point_id(const std::string& id) const {
  for (const auto& p : points)
    if (p.id == id) return &p;
  return nullptr;
}

const char* to_string(Direction direction) {
  return direction == Direction::kLowerIsBetter ? "lower_is_better" : "higher_is_better";
}

std::string axis_value_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();  // integers as integers; numbers round-trip in their shortest form
}

std::string point_key(const nlohmann::ordered_json& axes) {
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const auto& [name, value] : axes.items()) sorted.emplace_back(name, axis_value_text(json(value)));
  std::sort(sorted.begin(), sorted.end());
  std::string key;
  for (const auto& [name, value] : sorted) key += (key.empty() ? "" : ",") + name + "=" + value;
  return key;
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

// Validates `doc` against its version's schema and reads it; `axis_order` is
// sweep.axes's keys as written (empty: name order).
Result<Manifest> parse_manifest_ordered(const json& doc, const std::string& where,
                                        const std::vector<std::string>& axis_order);

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
  return parse_manifest_ordered(doc, where, {});
}

Result<Manifest> parse_manifest_text(std::string_view text, const std::string& where) {
  nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (ordered.is_discarded()) {
    try {
      const auto again = nlohmann::ordered_json::parse(text);  // again, for the parser's message: where and what
      (void)again;
    } catch (const json::exception& e) {
      return fail(invalid_argument(where, std::string("not valid JSON: ") + e.what()));
    }
    return fail(invalid_argument(where, "not valid JSON"));
  }
  std::vector<std::string> axis_order;
  if (ordered.is_object() && ordered.contains("sweep") && ordered["sweep"].is_object() &&
      ordered["sweep"].contains("axes") && ordered["sweep"]["axes"].is_object()) {
    for (const auto& [name, values] : ordered["sweep"]["axes"].items()) axis_order.push_back(name);
  }
  return parse_manifest_ordered(json(ordered), where, axis_order);
}

namespace {

// Every manifest field both versions share: build, paths, bench's process
// settings, variants, trials, runs, noise.
Status read_common(const json& doc, const std::string& where, Manifest& m) {
  m.source = doc;
  m.name = value_or<std::string>(doc, "name", "");

  const json build = doc.value("build", json::object());
  m.build.command = value_or<std::string>(build, "command", "");
  m.build.workdir = value_or<std::string>(build, "workdir", ".");
  m.build.timeout_s = value_or<double>(build, "timeout_s", 1800);

  m.paths = doc["paths"].get<std::vector<std::string>>();

  const json& bench = doc["bench"];
  m.bench.source = bench;
  m.bench.command = bench["command"].get<std::string>();
  m.bench.workdir = value_or<std::string>(bench, "workdir", ".");
  m.bench.timeout_s = value_or<double>(bench, "timeout_s", 3600);
  m.bench.idle_timeout_s = value_or<double>(bench, "idle_timeout_s", 300);
  m.bench.backend = value_or<std::string>(bench, "backend", "auto");
  m.bench.env = value_or<std::map<std::string, std::string>>(bench, "env", {});
  m.bench.record_env = value_or<std::vector<std::string>>(bench, "record_env", {});
  if (auto ok = check_workdir(m.build.workdir, where + ": build.workdir"); !ok) return ok;
  if (auto ok = check_workdir(m.bench.workdir, where + ": bench.workdir"); !ok) return ok;

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
  return {};
}

// The label template's pieces: literal text, and {axis} names.
struct LabelPiece {
  bool axis = false;
  std::string text;
};

Result<std::vector<LabelPiece>> parse_label(const std::string& tmpl, const std::string& field,
                                            const std::vector<AxisSpec>& axes) {
  std::vector<LabelPiece> out;
  std::string literal;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if ((c == '{' || c == '}') && i + 1 < tmpl.size() && tmpl[i + 1] == c) {
      literal += c;  // {{ and }} are literal braces
      ++i;
      continue;
    }
    if (c == '}') return fail(invalid_argument(field, "'" + tmpl + "': a '}' with no '{' (write '}}' for a brace)"));
    if (c != '{') {
      literal += c;
      continue;
    }
    auto close = tmpl.find('}', i);
    if (close == std::string::npos) return fail(invalid_argument(field, "'" + tmpl + "': a '{' is never closed"));
    std::string name = tmpl.substr(i + 1, close - i - 1);
    bool known = std::any_of(axes.begin(), axes.end(), [&](const AxisSpec& a) { return a.name == name; });
    if (!known) return fail(invalid_argument(field, "names axis '" + name + "' that the sweep does not have"));
    if (!literal.empty()) out.push_back({false, std::move(literal)});
    literal.clear();
    out.push_back({true, name});
    i = close;
  }
  if (!literal.empty()) out.push_back({false, literal});
  return out;
}

// The cartesian product of the axes, the first varying fastest, with keys,
// labels and protocol ids. `v1_id` makes version 1's ids.
Status make_points(Manifest& m, const std::string& where, bool v1) {
  std::vector<LabelPiece> label;
  if (!m.label_template.empty()) {
    auto parsed = parse_label(m.label_template, where + ": sweep.label", m.axes);
    if (!parsed) return fail(parsed.error());
    label = std::move(*parsed);
  }
  std::size_t count = 1;
  for (const auto& axis : m.axes) {
    count *= axis.values.size();
    if (count > 100000)
      return fail(invalid_argument(where + ": sweep", "has more than 100000 points; sweep fewer values"));
  }
  bool any_varies = std::any_of(m.axes.begin(), m.axes.end(), [](const AxisSpec& a) { return a.values.size() > 1; });
  std::map<std::string, std::string> label_owner;  // label -> key of the point that has it
  std::set<std::string> keys;
  std::vector<std::size_t> at(m.axes.size(), 0);
  for (std::size_t n = 0; n < count; ++n) {
    PointSpec p;
    for (std::size_t a = 0; a < m.axes.size(); ++a) p.axes[m.axes[a].name] = m.axes[a].values[at[a]];
    p.key = point_key(p.axes);
    if (!keys.insert(p.key).second)
      return fail(invalid_argument(where + ": sweep", "point " + p.key + " appears twice; remove the repeated value"));
    if (!label.empty()) {
      for (const auto& piece : label) p.label += piece.axis ? axis_value_text(json(p.axes[piece.text])) : piece.text;
    } else {
      for (const auto& axis : m.axes) {
        if (any_varies && axis.values.size() < 2) continue;
        p.label += (p.label.empty() ? "" : ",") + axis.name + "=" + axis_value_text(json(p.axes[axis.name]));
      }
    }
    if (auto [it, fresh] = label_owner.emplace(p.label, p.key); !fresh) {
      return fail(invalid_argument(where + ": sweep.label", "'" + m.label_template + "' gives two points the label '" + p.label +
                                                                "' (" + it->second + " and " + p.key +
                                                                "); name every axis that varies"));
    }
    if (p.label.size() > 128)
      return fail(invalid_argument(where + ": sweep.label", "the label of " + p.key + " is longer than 128 bytes"));
    if (v1) {
      p.id = "b" + axis_value_text(json(p.axes["batch"])) + "_h" + axis_value_text(json(p.axes["heads"])) + "_k" +
             axis_value_text(json(p.axes["topk"])) + "_" + axis_value_text(json(p.axes["dtype"]));
    } else {
      p.id = p.label;
    }
    m.points.push_back(std::move(p));
    for (std::size_t a = 0; a < at.size(); ++a) {  // odometer, first axis fastest
      if (++at[a] < m.axes[a].values.size()) break;
      at[a] = 0;
    }
  }
  return {};
}

// Version 1: the MLA decode step's four axes, its four metrics, its check
// tolerances -- translated into the generic model.
Status read_v1(const json& doc, const std::string& where, Manifest& m) {
  m.schema_version = 1;
  m.bench.threads = int_or(doc["bench"], "threads", 0, where + ": bench.threads");
  const json& sweep = doc["sweep"];
  auto axis = [&](const char* name, json fallback) {
    AxisSpec a{name, {}};
    for (const auto& v : sweep.value(name, fallback)) a.values.push_back(v);
    m.axes.push_back(std::move(a));
  };
  axis("batch", json::array({1, 8, 48, 64, 80, 96}));
  axis("heads", json::array({16}));
  axis("topk", json::array({2048}));
  axis("dtype", json::array({"bf16"}));
  // The users' name of a point is its concurrency, "C48"; when another axis
  // varies too that name is not unique, and the default label says it all.
  m.label_template = "C{batch}";
  for (std::size_t a = 1; a < m.axes.size(); ++a)
    if (m.axes[a].values.size() > 1) m.label_template.clear();
  if (auto ok = make_points(m, where, /*v1=*/true); !ok) return ok;

  // Version 1's check tolerances are the bench's own settings: its plan
  // carries them as "check", and they are the bench's params.
  const json check = doc.value("check", json::object());
  m.bench.params = {{"max_rel_l2_o", value_or<double>(check, "max_rel_l2_o", 0.01)},
                    {"max_abs_lse", value_or<double>(check, "max_abs_lse", 0.001)},
                    {"masked_fraction", value_or<double>(check, "masked_fraction", 0.1)}};

  m.metrics = {{"time_us", "us", Direction::kLowerIsBetter, "microseconds per decode step"},
               {"tokens_per_s", "tokens/s", Direction::kHigherIsBetter, "decode tokens per second"},
               {"bytes_per_s", "B/s", Direction::kHigherIsBetter, "bytes a step must move, per second"},
               {"flops_per_s", "FLOP/s", Direction::kHigherIsBetter, "floating-point operations per second"}};
  const json metric = doc.value("metric", json::object());
  m.metric.name = value_or<std::string>(metric, "name", std::string(schemas::kDefaultMetric));
  const MetricSpec* judged = m.find_metric(m.metric.name);  // the schema's enum lists only these four
  if (!judged) return fail(invalid_argument(where + ": metric.name", "'" + m.metric.name + "' is not a metric of version 1"));
  if (auto it = metric.find("direction"); it != metric.end() && *it != to_string(judged->direction)) {
    return fail(invalid_argument(where + ": metric.direction", m.metric.name + " is " + to_string(judged->direction)));
  }
  m.metric.direction = judged->direction;
  return {};
}

Status read_v2(const json& doc, const std::string& where, const std::vector<std::string>& axis_order, Manifest& m) {
  m.schema_version = 2;
  const json& bench = doc["bench"];
  m.bench.adapter = value_or<std::string>(bench, "adapter", "native");
  if (m.bench.adapter == "native") m.bench.adapter.clear();
  m.bench.params = bench.value("params", json::object());

  const json& axes = doc["sweep"]["axes"];
  std::vector<std::string> order = axis_order;
  if (order.size() != axes.size()) {
    order.clear();
    for (const auto& [name, values] : axes.items()) order.push_back(name);
  }
  for (const auto& name : order) {
    AxisSpec a{name, {}};
    const json& values = axes.at(name);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const json& v = values[i];
      if (v.is_string()) {
        const auto text = v.get<std::string>();
        if (text.find_first_of(",=") != std::string::npos) {
          return fail(invalid_argument(where + ": sweep.axes." + name + "[" + std::to_string(i) + "]",
                                       "'" + text + "': ',' and '=' cannot be in an axis value (they separate a point's key)"));
        }
      }
      a.values.push_back(v);
    }
    m.axes.push_back(std::move(a));
  }
  m.label_template = value_or<std::string>(doc["sweep"], "label", "");
  if (auto ok = make_points(m, where, /*v1=*/false); !ok) return ok;

  const json metrics = doc.value("metrics", json::array({{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}}}));
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const json& entry = metrics[i];
    MetricSpec spec{entry["name"].get<std::string>(), entry["unit"].get<std::string>(),
                    entry["direction"] == "higher_is_better" ? Direction::kHigherIsBetter : Direction::kLowerIsBetter,
                    value_or<std::string>(entry, "description", "")};
    if (m.find_metric(spec.name)) {
      return fail(invalid_argument(where + ": metrics[" + std::to_string(i) + "].name",
                                   "'" + spec.name + "' is declared by an earlier metric; names must be unique"));
    }
    m.metrics.push_back(std::move(spec));
  }
  m.metric.name = value_or<std::string>(doc, "metric", m.metrics.front().name);
  const MetricSpec* judged = m.find_metric(m.metric.name);
  if (!judged) {
    std::string declared;
    for (const auto& spec : m.metrics) declared += (declared.empty() ? "" : ", ") + spec.name;
    return fail(invalid_argument(where + ": metric", "'" + m.metric.name + "' is not one of the declared metrics (" + declared + ")"));
  }
  m.metric.direction = judged->direction;
  return {};
}

Result<Manifest> read_fields(const json& doc, const std::string& where, const std::vector<std::string>& axis_order) {
  Manifest m;
  if (auto ok = read_common(doc, where, m); !ok) return fail(ok.error());
  const bool v2 = doc["schema_version"] == 2;
  if (auto ok = v2 ? read_v2(doc, where, axis_order, m) : read_v1(doc, where, m); !ok) return fail(ok.error());
  return m;
}

Result<Manifest> parse_manifest_ordered(const json& doc, const std::string& where,
                                        const std::vector<std::string>& axis_order) {
  const bool v2 = doc.is_object() && doc.contains("schema_version") && doc["schema_version"] == 2;
  auto schema = schemas::Schema::load(v2 ? "manifest.v2.schema.json" : "manifest.schema.json");
  if (!schema) return fail(schema.error());
  if (auto ok = schema->validate(doc, where); !ok) return fail(ok.error());
  // The schema has checked every type, so a JSON exception here is a gap
  // between the schema and this parser: an error about the manifest, never
  // an exception through the daemon.
  try {
    return read_fields(doc, where, axis_order);
  } catch (const FieldError& e) {
    return fail(e.error);
  } catch (const json::exception& e) {
    return fail(invalid_argument(where, std::string("does not fit what perfwatch reads: ") + e.what()));
  }
}

}  // namespace

Result<Manifest> load_manifest(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return fail(not_found(path.string(), "cannot read the manifest"));
  std::stringstream text;
  text << in.rdbuf();
  return parse_manifest_text(text.str(), path.string());
}

}  // namespace perfwatch::runner
