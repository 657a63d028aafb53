#include "adapters/google_benchmark.h"

#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "adapters/execution.h"
#include "adapters/host.h"
#include "adapters/placeholders.h"
#include "adapters/text.h"

namespace perfwatch::adapters {

using nlohmann::json;
namespace fs = std::filesystem;

std::string exact_filter(std::string_view name) {
  std::string out = "^";
  for (char c : name) {
    if (std::string_view(".[]()*+?{}|^$\\").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('$');
  return out;
}

Result<json> parse_benchmark_json(std::string_view text) {
  // Replace the bare NaN / Infinity tokens Google Benchmark writes for
  // non-finite counters with null, outside strings only.
  std::string clean;
  clean.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      clean.push_back(c);
      if (c == '\\' && i + 1 < text.size()) clean.push_back(text[++i]);
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      clean.push_back(c);
      continue;
    }
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "-NaN", "NaN"}) {
      if (text.substr(i, token.size()) == token) {
        clean += "null";
        i += token.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) clean.push_back(c);
  }
  json doc = json::parse(clean, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return fail(protocol_error("", "is not Google Benchmark's JSON (not a JSON object)"));
  if (!doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    return fail(protocol_error("", "is not Google Benchmark's JSON (no \"benchmarks\" array)"));
  return doc;
}

namespace {

// Microseconds per unit of Google Benchmark's time_unit.
std::optional<double> us_per(const std::string& unit) {
  if (unit == "ns") return 1e-3;
  if (unit == "us") return 1.0;
  if (unit == "ms") return 1e3;
  if (unit == "s") return 1e6;
  return std::nullopt;
}

std::string seconds_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", ms / 1000.0);
  return buf;
}

class GoogleBenchmarkBench final : public Bench {
 public:
  GoogleBenchmarkBench(BenchSettings settings, std::ostream& log) : settings_(std::move(settings)), log_(log) {}

  perfwatch::Status prepare(const Plan& plan) override {
    plan_ = &plan;
    if (!settings_.doc.contains("google_benchmark"))
      return fail(invalid_argument("bench.google_benchmark",
                                   "the google-benchmark adapter needs it: at least the name template, e.g. "
                                   "{\"name\": \"BM_decode<{block_t}>/{batch}\"}"));
    const json& gb = settings_.doc["google_benchmark"];
    name_template_ = gb["name"].get<std::string>();
    if (gb.contains("args"))
      for (const auto& a : gb["args"]) extra_args_.push_back(a.get<std::string>());
    if (auto ok = read_fields(plan, gb); !ok) return ok;

    auto words = split_words(settings_.command);
    if (words.empty()) return fail(invalid_argument("bench.command", "is empty"));
    auto program = find_program(words[0], settings_.workdir);
    if (!program)
      return fail(invalid_argument("bench.command", quote(words[0]) + ": no such program (" +
                                                        (words[0].find('/') != std::string::npos
                                                             ? "no executable file " +
                                                                   (settings_.workdir / words[0]).lexically_normal().string()
                                                             : std::string("not found on PATH")) +
                                                        ")"));
    program_ = *program;
    fixed_args_.assign(words.begin() + 1, words.end());
    auto hash = sha256_file(program_);
    if (!hash) return fail(hash.error());
    hash_ = *hash;

    for (const auto& v : plan.variants)
      for (const auto& p : plan.points) {
        auto name = expand(name_template_, v, p, "bench.google_benchmark.name");
        if (!name) return fail(name.error());
        names_[{v.name, p.id}] = std::move(*name);
        for (const auto& [var, text] : settings_.env) {
          auto value = expand(text, v, p, "bench.env." + var);
          if (!value) return fail(value.error());
          env_[{v.name, p.id}][var] = std::move(*value);
        }
      }
    if (auto ok = list_benchmarks(); !ok) return ok;
    probe_warmup_flag();
    return {};
  }

  json header() const override {
    return {{"bench", "perfwatch google-benchmark adapter 1 (" + program_.filename().string() + ")"},
            {"backend", plan_->backend},
            {"backend_reason", "the manifest's bench.backend: an adapter cannot see what the benchmark ran on"},
            {"timer", "external"},
            {"timer_note", "Google Benchmark's own timing: one repetition per trial, its time per iteration"},
            {"device", host_device(host_facts())},
            {"build", {{"id", hash_}, {"binary_hash", hash_}}}};
  }

  VariantReport variant(const Variant& v) const override {
    std::vector<std::string> templates = {name_template_};
    for (const auto& [_, text] : settings_.env) templates.push_back(text);
    return {true, "", unused_params(v, templates)};
  }

  perfwatch::Status measure(const Variant& v, const Point& p, Cell& cell) override {
    const std::string& name = names_.at({v.name, p.id});
    if (!listed_.contains(name)) {
      // Reached only at the cell's first request: the session answers later
      // ones with a skipped line.
      cell.check_infeasible("the binary has no benchmark named " + quote(name) + " (bench.google_benchmark.name " +
                            quote(name_template_) + "); nearest: " + quote_list(nearest(listed_names_, name)));
      return {};
    }
    runner::ProcessSpec spec;
    spec.argv.push_back(program_.string());
    spec.argv.insert(spec.argv.end(), fixed_args_.begin(), fixed_args_.end());
    if (plan_->min_trial_ms) spec.argv.push_back("--benchmark_min_time=" + seconds_text(*plan_->min_trial_ms));
    if (plan_->warmup_ms && *plan_->warmup_ms > 0 && warmup_flag_)
      spec.argv.push_back("--benchmark_min_warmup_time=" + seconds_text(*plan_->warmup_ms));
    spec.argv.insert(spec.argv.end(), extra_args_.begin(), extra_args_.end());
    spec.argv.push_back("--benchmark_filter=" + exact_filter(name));
    spec.argv.push_back("--benchmark_format=json");
    spec.argv.push_back("--benchmark_repetitions=" + std::to_string(cell.requested()));
    spec.argv.push_back("--benchmark_report_aggregates_only=false");
    spec.argv.push_back("--benchmark_display_aggregates_only=false");
    spec.workdir = settings_.workdir;
    if (auto it = env_.find({v.name, p.id}); it != env_.end()) spec.env = it->second;
    spec.timeout_s = settings_.trial_timeout_s * cell.requested();
    Execution e = execute(spec);
    char took[32];
    std::snprintf(took, sizeof took, "%.3f", e.result.wall_s);
    log_ << "google-benchmark adapter: " << v.name << " @ " << p.id << ": " << name << " x" << cell.requested()
         << ": " << e.result.describe() << " in " << took << " s\n";

    json detail = {{"benchmark", name}};
    if (!e.result.ok()) {
      std::string reason = failure(e);
      if (e.result.tail.find("unrecognized command-line flag") != std::string::npos)
        reason += " (an older Google Benchmark than this adapter's flags need? It was written for 1.7)";
      if (cell.first()) {
        cell.check_incorrect(reason, detail);
        return {};
      }
      return cell.fail(reason);
    }
    auto doc = parse_benchmark_json(e.out);
    if (!doc)
      return fail(protocol_error("bench.command", "what " + e.shown + " wrote on stdout " + doc.error().message +
                                                      "; it begins " + quote(e.out.substr(0, 120)) + stderr_tail(e)));
    log_context(*doc);

    std::vector<const json*> runs;
    for (const auto& b : (*doc)["benchmarks"]) {
      if (!b.is_object() || b.value("name", "") != name) continue;
      if (b.value("run_type", "iteration") != "iteration") continue;
      // Skipped or errored: every repetition says so; the first reason is enough.
      std::string why;
      if (b.value("error_occurred", false)) why = b.value("error_message", "error_occurred");
      else if (b.value("skipped", false)) why = b.value("skip_message", "skipped");
      if (!why.empty()) {
        std::string reason = "Google Benchmark reports " + quote(name) + " " +
                             (b.value("error_occurred", false) ? "errored: " : "skipped: ") + why;
        if (cell.first()) {
          cell.check_infeasible(reason, detail);
          return {};
        }
        return cell.fail(reason, /*infeasible=*/true);
      }
      runs.push_back(&b);
    }
    if (static_cast<int>(runs.size()) < cell.requested())
      return fail(protocol_error("bench.command", e.shown + " reported " + std::to_string(runs.size()) +
                                                      " repetitions of " + quote(name) + ", not the " +
                                                      std::to_string(cell.requested()) + " asked for"));
    if (static_cast<int>(runs.size()) > cell.requested()) {
      // The benchmark sets its own Repetitions(n), which overrides the flag.
      log_ << "google-benchmark adapter: " << name << " ran " << runs.size() << " repetitions (its own "
           << "Repetitions()); the first " << cell.requested() << " are the trials asked for\n";
      runs.resize(static_cast<size_t>(cell.requested()));
    }

    std::vector<MetricValues> trials;
    for (const json* run : runs) {
      auto values = read_values(*run, name);
      if (!values) return fail(values.error());
      if (auto bad = invalid_values(*plan_, *values)) {
        std::string reason = *bad + ", read from " + quote(name) + "'s result";
        if (cell.first()) {
          cell.check_incorrect(reason, detail);
          return {};
        }
        return cell.fail(reason);
      }
      trials.push_back(std::move(*values));
    }
    if (cell.first()) {
      detail["iterations"] = runs.front()->value("iterations", 0);
      detail["time_unit"] = runs.front()->value("time_unit", "");
      cell.check_ok(detail);
    }
    for (size_t i = 0; i < trials.size(); ++i) {
      std::optional<std::int64_t> steps;
      if (const auto& it = (*runs[i])["iterations"]; it.is_number_integer()) steps = it.get<std::int64_t>();
      if (auto ok = cell.trial(trials[i], steps); !ok) return ok;
    }
    return {};
  }

 private:
  perfwatch::Status read_fields(const Plan& plan, const json& gb) {
    if (gb.contains("fields")) {
      for (const auto& [metric, field] : gb["fields"].items()) {
        if (plan.metric(metric) == nullptr)
          return fail(invalid_argument("bench.google_benchmark.fields." + metric,
                                       "'" + metric + "' is not a declared metric (declared: " + plan.metric_names() + ")"));
        fields_[metric] = field.get<std::string>();
      }
    }
    if (!fields_.contains(plan.judged_metric)) {
      if (plan.metric(plan.judged_metric)->higher_is_better)
        return fail(invalid_argument("bench.google_benchmark.fields",
                                     "no field for the judged metric " + plan.judged_metric +
                                         ", and the default (real_time, a time) cannot judge a metric where higher "
                                         "is better; map it, e.g. {\"" + plan.judged_metric +
                                         "\": \"items_per_second\"}"));
      fields_[plan.judged_metric] = "real_time";
    }
    return {};
  }

  perfwatch::Status list_benchmarks() {
    runner::ProcessSpec spec;
    spec.argv.push_back(program_.string());
    spec.argv.insert(spec.argv.end(), fixed_args_.begin(), fixed_args_.end());
    spec.argv.insert(spec.argv.end(), extra_args_.begin(), extra_args_.end());
    spec.argv.push_back("--benchmark_list_tests=true");
    spec.workdir = settings_.workdir;
    spec.timeout_s = settings_.trial_timeout_s;
    Execution e = execute(spec);
    if (!e.result.ok())
      return fail(invalid_argument("bench.command", "listing the benchmarks failed: " + failure(e)));
    for (auto line : split_lines(e.out)) {
      if (line.empty()) continue;
      listed_names_.emplace_back(line);
      listed_.insert(std::string(line));
    }
    if (listed_names_.empty())
      return fail(invalid_argument("bench.command", e.shown + " lists no benchmark" + stderr_tail(e)));
    log_ << "google-benchmark adapter: " << program_.string() << " lists " << listed_names_.size() << " benchmarks\n";

    std::vector<std::string> missing;
    for (const auto& [cell, name] : names_)
      if (!listed_.contains(name)) missing.push_back("'" + name + "' (variant " + cell.first + ", point " + cell.second + ")");
    if (missing.size() == names_.size()) {
      const auto& [cell, name] = *names_.begin();
      return fail(invalid_argument(
          "bench.google_benchmark.name",
          quote(name_template_) + " names no benchmark of " + program_.filename().string() + ": for variant '" +
              cell.first + "' at point '" + cell.second + "' it gives " + quote(name) +
              "; nearest names the binary has: " + quote_list(nearest(listed_names_, name)) + " (of " +
              std::to_string(listed_names_.size()) + ")"));
    }
    for (const auto& m : missing)
      log_ << "google-benchmark adapter: no benchmark " << m << ": its check will be infeasible\n";
    return {};
  }

  // --benchmark_min_warmup_time came with Google Benchmark 1.7; an older
  // binary rejects it. Its --help says which flags it takes.
  void probe_warmup_flag() {
    runner::ProcessSpec spec;
    spec.argv = {program_.string(), "--help"};
    spec.workdir = settings_.workdir;
    spec.timeout_s = std::min(30.0, settings_.trial_timeout_s);
    Execution e = execute(spec);
    warmup_flag_ = (e.out + e.result.tail).find("--benchmark_min_warmup_time") != std::string::npos;
    if (!warmup_flag_)
      log_ << "google-benchmark adapter: the binary's --help does not list --benchmark_min_warmup_time; the "
              "plan's warm-up is left to the benchmark\n";
  }

  Result<MetricValues> read_values(const json& run, const std::string& name) const {
    MetricValues values;
    for (const auto& [metric, field] : fields_) {
      const std::string where = "bench.google_benchmark.fields." + metric;
      if (!run.contains(field)) {
        std::vector<std::string> present;
        for (const auto& [k, v] : run.items())
          if (v.is_number() || v.is_null()) present.push_back(k);
        return fail(invalid_argument(where, "the result of " + quote(name) + " has no field " + quote(field) +
                                                " (its numeric fields: " + quote_list(present) + ")"));
      }
      const json& value = run[field];
      if (!value.is_number())
        return fail(invalid_argument(where, "the field " + quote(field) + " of " + quote(name) + " is " +
                                                (value.is_null() ? std::string("NaN or infinite")
                                                                 : value.dump(-1, ' ', false, json::error_handler_t::replace)) +
                                                ", not a number"));
      double x = value.get<double>();
      if (field == "real_time" || field == "cpu_time") {
        std::string unit = run.value("time_unit", "ns");
        auto factor = us_per(unit);
        if (!factor)
          return fail(protocol_error(where, "the result of " + quote(name) + " has time_unit " + quote(unit) +
                                                ", which is none of ns, us, ms, s"));
        x *= *factor;
      }
      values[metric] = x;
    }
    return values;
  }

  void log_context(const json& doc) {
    if (context_logged_ || !doc.contains("context") || !doc["context"].is_object()) return;
    context_logged_ = true;
    const json& c = doc["context"];
    log_ << "google-benchmark adapter: context: host_name=" << c.value("host_name", "?")
         << " num_cpus=" << c.value("num_cpus", 0) << " mhz_per_cpu=" << c.value("mhz_per_cpu", 0)
         << " library_build_type=" << c.value("library_build_type", "?") << "\n";
  }

  BenchSettings settings_;
  std::ostream& log_;
  const Plan* plan_ = nullptr;
  std::string name_template_;
  std::vector<std::string> extra_args_;
  std::map<std::string, std::string> fields_;  // metric -> result field
  fs::path program_;
  std::vector<std::string> fixed_args_;
  std::string hash_;
  std::map<std::pair<std::string, std::string>, std::string> names_;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> env_;
  std::vector<std::string> listed_names_;
  std::set<std::string> listed_;
  bool warmup_flag_ = false;
  bool context_logged_ = false;
};

}  // namespace

std::unique_ptr<Bench> make_google_benchmark_bench(BenchSettings settings, std::ostream& log) {
  return std::make_unique<GoogleBenchmarkBench>(std::move(settings), log);
}

}  // namespace perfwatch::adapters
