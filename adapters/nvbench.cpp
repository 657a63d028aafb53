#include "adapters/nvbench.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "adapters/execution.h"
#include "adapters/host.h"
#include "adapters/placeholders.h"
#include "adapters/text.h"

namespace perfwatch::adapters {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kDefaultField = "nv/cold/time/gpu/mean";

// A folder for NVBench's JSON output, removed with what is in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "perfwatch-nvbench.XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct NvAxis {
  std::string name;
  std::string type;                          // int64, float64, string, type
  std::vector<std::string> input_strings;    // what -a accepts for a type axis
  size_t values = 0;
};

// The summary's "value" entry of data[] as a number. NVBench writes int64 and
// float64 values as strings (JSON numbers would lose int64 precision).
std::optional<double> summary_value(const json& summary) {
  if (!summary.contains("data") || !summary["data"].is_array()) return std::nullopt;
  for (const auto& d : summary["data"]) {
    if (!d.is_object() || d.value("name", "") != "value") continue;
    const json& v = d.contains("value") ? d["value"] : json();
    const std::string type = d.value("type", "");
    if (type != "int64" && type != "float64") return std::nullopt;
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return parse_number(v.get<std::string>());
    return std::nullopt;
  }
  return std::nullopt;
}

const json* find_summary(const json& state, const std::string& tag) {
  if (!state.contains("summaries") || !state["summaries"].is_array()) return nullptr;
  for (const auto& s : state["summaries"])
    if (s.is_object() && s.value("tag", "") == tag) return &s;
  return nullptr;
}

class NvbenchBench final : public Bench {
 public:
  NvbenchBench(BenchSettings settings, std::ostream& log) : settings_(std::move(settings)), log_(log) {}

  perfwatch::Status prepare(const Plan& plan) override {
    plan_ = &plan;
    const json nv = settings_.doc.value("nvbench", json::object());
    if (nv.contains("axes"))
      for (const auto& [k, v] : nv["axes"].items()) axis_map_[k] = v.get<std::string>();
    if (nv.contains("args"))
      for (const auto& a : nv["args"]) extra_args_.push_back(a.get<std::string>());
    if (nv.contains("fields"))
      for (const auto& [metric, tag] : nv["fields"].items()) {
        if (plan.metric(metric) == nullptr)
          return fail(invalid_argument("bench.nvbench.fields." + metric, "'" + metric +
                                                                             "' is not a declared metric (declared: " +
                                                                             plan.metric_names() + ")"));
        fields_[metric] = tag.get<std::string>();
      }
    if (!fields_.contains(plan.judged_metric)) {
      if (plan.metric(plan.judged_metric)->higher_is_better)
        return fail(invalid_argument("bench.nvbench.fields",
                                     "no summary for the judged metric " + plan.judged_metric + ", and the default (" +
                                         kDefaultField + ", a time) cannot judge a metric where higher is better; "
                                         "map it, e.g. {\"" + plan.judged_metric + "\": \"nv/cold/bw/item_rate\"}"));
      fields_[plan.judged_metric] = kDefaultField;
    }

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
    if (scratch_.path().empty()) return fail(io_error("nvbench adapter", "cannot create a temporary folder"));

    auto devices = list("--jsonlist-devices");
    if (!devices) return fail(devices.error());
    if (!(*devices).contains("devices") || !(*devices)["devices"].is_array() || (*devices)["devices"].empty())
      return fail(invalid_argument("bench.command", program_.string() + " --jsonlist-devices lists no CUDA device"));
    device_ = (*devices)["devices"][0];

    auto benches = list("--jsonlist-benches");
    if (!benches) return fail(benches.error());
    if (auto ok = choose_benchmark(*benches, nv); !ok) return ok;
    return map_axes(plan);
  }

  json header() const override {
    json device = {{"name", device_.value("name", "unknown CUDA device")}};
    if (device_.value("number_of_sms", 0) > 0) device["multiprocessors"] = device_["number_of_sms"];
    if (int sm = device_.value("sm_version", 0); sm > 0)
      device["compute_capability"] = std::to_string(sm / 100) + "." + std::to_string(sm % 100 / 10);
    auto copy_count = [&](const char* from, const char* to) {
      if (device_.contains(from) && device_[from].is_number_integer() && device_[from].get<std::int64_t>() >= 0)
        device[to] = device_[from];
    };
    copy_count("l2_cache_size", "l2_bytes");
    copy_count("global_memory_size", "global_mem_bytes");
    copy_count("global_memory_bus_width", "mem_bus_width_bits");
    copy_count("shared_memory_per_block", "smem_per_block_optin_bytes");
    if (double hz = device_.value("sm_default_clock_rate", 0.0); hz > 0) device["sm_clock_mhz"] = hz / 1e6;
    if (double hz = device_.value("global_memory_bus_peak_clock_rate", 0.0); hz > 0) device["mem_clock_mhz"] = hz / 1e6;
    device["extra"] = {{"host_name", host_facts().host_name}};
    std::string backend = plan_->backend == "auto" ? "cuda" : plan_->backend;
    return {{"bench", "perfwatch nvbench adapter 1 (" + program_.filename().string() + ")"},
            {"backend", backend},
            {"backend_reason", plan_->backend == "auto" ? "NVBench runs on CUDA devices"
                                                        : "the manifest's bench.backend"},
            {"timer", "external"},
            {"timer_note", "NVBench's own measurement (CUDA events, its stopping criterion); one execution per trial"},
            {"device", device},
            {"build", {{"id", hash_}, {"binary_hash", hash_}}}};
  }

  VariantReport variant(const Variant& v) const override {
    VariantReport report;
    for (const auto& [param, _] : v.params.items())
      if (!axes_.contains(nv_name(param))) report.ignored_params.push_back(param);
    return report;
  }

  perfwatch::Status measure(const Variant& v, const Point& p, Cell& cell) override {
    const std::vector<std::string>& axis_args = axis_args_.at({v.name, p.id});
    for (int i = 0; i < cell.requested(); ++i) {
      const fs::path out = scratch_.path() / "nvbench.json";
      std::error_code ec;
      fs::remove(out, ec);
      runner::ProcessSpec spec;
      spec.argv.push_back(program_.string());
      spec.argv.insert(spec.argv.end(), fixed_args_.begin(), fixed_args_.end());
      spec.argv.insert(spec.argv.end(), {"-b", benchmark_, "--devices", "0"});
      spec.argv.insert(spec.argv.end(), axis_args.begin(), axis_args.end());
      spec.argv.insert(spec.argv.end(), extra_args_.begin(), extra_args_.end());
      spec.argv.insert(spec.argv.end(), {"--json", out.string()});
      spec.workdir = settings_.workdir;
      spec.env = env_.count({v.name, p.id}) ? env_.at({v.name, p.id}) : std::map<std::string, std::string>{};
      spec.timeout_s = settings_.trial_timeout_s;
      Execution e = execute(spec);
      char took[32];
      std::snprintf(took, sizeof took, "%.3f", e.result.wall_s);
      log_ << "nvbench adapter: " << v.name << " @ " << p.id << ": " << e.shown << " " << e.result.describe() << " in "
           << took << " s\n";
      if (!e.result.ok()) {
        if (cell.first()) {
          cell.check_incorrect(failure(e));
          return {};
        }
        return cell.fail(failure(e));
      }
      auto state = read_state(out, e);
      if (!state) return fail(state.error());
      json detail = {{"state", state->value("name", "")}};
      if (state->value("is_skipped", false)) {
        std::string reason = "NVBench skipped " + quote(state->value("name", benchmark_)) + ": " +
                             state->value("skip_reason", "no reason given");
        if (cell.first()) {
          cell.check_infeasible(reason, detail);
          return {};
        }
        return cell.fail(reason, /*infeasible=*/true);
      }
      auto values = read_values(*state);
      if (!values) return fail(values.error());
      if (auto bad = invalid_values(*plan_, *values)) {
        std::string reason = *bad + ", read from NVBench state " + quote(state->value("name", ""));
        if (cell.first()) {
          cell.check_incorrect(reason, detail);
          return {};
        }
        return cell.fail(reason);
      }
      std::optional<std::int64_t> steps;
      if (const json* s = find_summary(*state, "nv/cold/sample_size"))
        if (auto n = summary_value(*s)) steps = static_cast<std::int64_t>(*n);
      std::optional<double> clock_mhz;
      if (const json* s = find_summary(*state, "nv/cold/sm_clock_rate/mean"))
        if (auto hz = summary_value(*s)) clock_mhz = *hz / 1e6;
      if (cell.first()) cell.check_ok(detail);
      if (auto ok = cell.trial(*values, steps, clock_mhz); !ok) return ok;
    }
    return {};
  }

 private:
  std::string nv_name(const std::string& manifest_name) const {
    auto it = axis_map_.find(manifest_name);
    return it == axis_map_.end() ? manifest_name : it->second;
  }

  Result<json> list(const char* flag) {
    runner::ProcessSpec spec;
    spec.argv.push_back(program_.string());
    spec.argv.insert(spec.argv.end(), fixed_args_.begin(), fixed_args_.end());
    spec.argv.push_back(flag);
    spec.workdir = settings_.workdir;
    spec.timeout_s = settings_.trial_timeout_s;
    Execution e = execute(spec);
    json doc = json::parse(e.out, nullptr, /*allow_exceptions=*/false);
    if (!e.result.ok() || doc.is_discarded() || !doc.is_object())
      return fail(invalid_argument("bench.command", e.shown + (e.result.ok() ? " wrote no JSON object" : " " + e.result.describe()) +
                                                        stderr_tail(e) +
                                                        " (NVBench took " + flag + " from April 2023 on; is this an "
                                                        "NVBench binary, and a recent one?)"));
    return doc;
  }

  perfwatch::Status choose_benchmark(const json& list, const json& nv) {
    std::vector<std::string> names;
    const json* chosen = nullptr;
    const std::string wanted = nv.value("benchmark", "");
    if (list.contains("benchmarks") && list["benchmarks"].is_array())
      for (const auto& b : list["benchmarks"]) {
        if (!b.is_object()) continue;
        names.push_back(b.value("name", ""));
        if (!wanted.empty() && names.back() == wanted) chosen = &b;
      }
    if (names.empty()) return fail(invalid_argument("bench.command", program_.string() + " lists no benchmark"));
    if (wanted.empty()) {
      if (names.size() > 1)
        return fail(invalid_argument("bench.nvbench.benchmark", "the binary has " + std::to_string(names.size()) +
                                                                    " benchmarks (" + quote_list(names) +
                                                                    "); name the one to watch"));
      chosen = &list["benchmarks"][0];
    }
    if (chosen == nullptr)
      return fail(invalid_argument("bench.nvbench.benchmark", quote(wanted) + " is no benchmark of " +
                                                                  program_.filename().string() + "; nearest: " +
                                                                  quote_list(nearest(names, wanted))));
    benchmark_ = chosen->value("name", "");
    if (chosen->contains("axes") && (*chosen)["axes"].is_array())
      for (const auto& a : (*chosen)["axes"]) {
        NvAxis axis{a.value("name", ""), a.value("type", ""), {}, 0};
        if (a.contains("values") && a["values"].is_array()) {
          axis.values = a["values"].size();
          for (const auto& v : a["values"]) axis.input_strings.push_back(v.value("input_string", ""));
        }
        axes_[axis.name] = std::move(axis);
      }
    return {};
  }

  // The -a arguments of each variant x point, checked against the axes' types.
  perfwatch::Status map_axes(const Plan& plan) {
    std::vector<std::string> axis_names;
    for (const auto& [name, _] : axes_) axis_names.push_back(name);
    for (const auto& [from, to] : axis_map_)
      if (!axes_.contains(to))
        return fail(invalid_argument("bench.nvbench.axes." + from, quote(to) + " is no axis of NVBench benchmark " +
                                                                       quote(benchmark_) + " (its axes: " +
                                                                       quote_list(axis_names) + ")"));
    for (const auto& v : plan.variants) {
      for (const auto& p : plan.points) {
        std::vector<std::string> args;
        std::set<std::string> set_axes;
        auto add = [&](const std::string& name, const json& value, const std::string& where,
                       bool must_exist) -> perfwatch::Status {
          const std::string nv = nv_name(name);
          auto it = axes_.find(nv);
          if (it == axes_.end()) {
            if (!must_exist) return {};
            return fail(invalid_argument(where, "sweep axis " + quote(name) + " is no axis of NVBench benchmark " +
                                                    quote(benchmark_) + " (its axes: " + quote_list(axis_names) +
                                                    "); map it in bench.nvbench.axes"));
          }
          if (set_axes.contains(nv))
            return fail(invalid_argument(where, "NVBench axis " + quote(nv) + " is set twice for variant '" + v.name +
                                                    "' at point '" + p.id + "' (by a sweep axis and a param)"));
          const NvAxis& axis = it->second;
          const std::string text = scalar_text(value);
          bool fits = axis.type == "int64"     ? value.is_number_integer()
                      : axis.type == "float64" ? value.is_number()
                      : axis.type == "type"    ? std::find(axis.input_strings.begin(), axis.input_strings.end(), text) !=
                                                  axis.input_strings.end()
                                               : true;
          if (!fits)
            return fail(invalid_argument(
                where, quote(text) + " does not fit NVBench axis " + quote(nv) + " of type " + axis.type +
                           (axis.type == "type" ? " (its types: " + quote_list(axis.input_strings) + ")" : "")));
          set_axes.insert(nv);
          args.push_back("-a");
          args.push_back(nv + "=" + text);
          return {};
        };
        for (const auto& [axis, value] : p.axes.items())
          if (auto ok = add(axis, value, "sweep.axes." + axis, true); !ok) return ok;
        for (const auto& [param, value] : v.params.items())
          if (auto ok = add(param, value, "variant '" + v.name + "': params." + param, false); !ok) return ok;
        for (const auto& [name, axis] : axes_)
          if (axis.values > 1 && !set_axes.contains(name))
            return fail(invalid_argument(
                "bench.nvbench.axes",
                "NVBench axis " + quote(name) + " of " + quote(benchmark_) + " has " + std::to_string(axis.values) +
                    " values, and neither the sweep nor the params of variant '" + v.name +
                    "' set it: one execution would measure several configurations. Add it to the sweep or the "
                    "params (mapped by bench.nvbench.axes if the names differ)"));
        axis_args_[{v.name, p.id}] = std::move(args);
        for (const auto& [var, text] : settings_.env) {
          auto value = expand(text, v, p, "bench.env." + var);
          if (!value) return fail(value.error());
          env_[{v.name, p.id}][var] = std::move(*value);
        }
      }
    }
    return {};
  }

  Result<json> read_state(const fs::path& file, const Execution& e) const {
    std::ifstream in(file);
    if (!in)
      return fail(protocol_error("bench.command", e.shown + " exited 0 but wrote no JSON to " + file.string() +
                                                      stderr_tail(e)));
    json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
      return fail(protocol_error("bench.command", "the JSON " + e.shown + " wrote is not NVBench's (no benchmarks array)"));
    std::vector<const json*> states;
    for (const auto& b : doc["benchmarks"]) {
      if (!b.is_object() || b.value("name", "") != benchmark_ || !b.contains("states") || !b["states"].is_array())
        continue;
      for (const auto& s : b["states"])
        if (s.is_object()) states.push_back(&s);
    }
    if (states.size() != 1) {
      std::string listing;
      for (const json* s : states) listing += (listing.empty() ? "" : ", ") + quote(s->value("name", ""));
      return fail(protocol_error("bench.command", e.shown + " measured " + std::to_string(states.size()) +
                                                      " configurations of " + quote(benchmark_) +
                                                      ", not one" + (listing.empty() ? "" : ": " + listing)));
    }
    return *states.front();
  }

  Result<MetricValues> read_values(const json& state) const {
    MetricValues values;
    for (const auto& [metric, tag] : fields_) {
      const std::string where = "bench.nvbench.fields." + metric;
      const json* summary = find_summary(state, tag);
      if (summary == nullptr) {
        std::vector<std::string> tags;
        if (state.contains("summaries"))
          for (const auto& s : state["summaries"]) tags.push_back(s.value("tag", ""));
        return fail(invalid_argument(where, "NVBench state " + quote(state.value("name", "")) + " has no summary " +
                                                quote(tag) + " (it has: " + quote_list(tags) + ")"));
      }
      auto value = summary_value(*summary);
      if (!value)
        return fail(invalid_argument(where, "the summary " + quote(tag) + " of NVBench state " +
                                                quote(state.value("name", "")) + " has no numeric value: " +
                                                summary->value("data", json::array()).dump(-1, ' ', false,
                                                                                            json::error_handler_t::replace)));
      values[metric] = summary->value("hint", "") == "duration" ? *value * 1e6 : *value;
    }
    return values;
  }

  BenchSettings settings_;
  std::ostream& log_;
  const Plan* plan_ = nullptr;
  std::map<std::string, std::string> axis_map_;   // manifest name -> NVBench axis
  std::map<std::string, std::string> fields_;     // metric -> summary tag
  std::vector<std::string> extra_args_;
  fs::path program_;
  std::vector<std::string> fixed_args_;
  std::string hash_;
  ScratchDir scratch_;
  json device_;
  std::string benchmark_;
  std::map<std::string, NvAxis> axes_;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> axis_args_;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> env_;
};

}  // namespace

std::unique_ptr<Bench> make_nvbench_bench(BenchSettings settings, std::ostream& log) {
  return std::make_unique<NvbenchBench>(std::move(settings), log);
}

}  // namespace perfwatch::adapters
