// A fake NVBench binary for the nvbench adapter's tests (there is no GPU in
// CI). It takes the options the adapter uses -- --jsonlist-devices,
// --jsonlist-benches, -b, --devices, -a Name=value, --json FILE -- and writes
// JSON in the shapes of NVBench's json_printer.cu (file version 1): values of
// summaries and axis values as strings, durations in seconds, one state per
// configuration. Its figures are formulas, so a test can tell that the right
// axis values arrived: GPU time = Batch * (1 + BlockT / 64) microseconds.
// BlockT=64 at Batch=8 is skipped ("not enough shared memory"), as NVBench
// reports a configuration a benchmark skips. FAKE_NVBENCH_FAIL=1 makes it
// fail as NVBench does on an exception.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using nlohmann::ordered_json;

namespace {

struct Axis {
  std::string name, type;
  std::vector<std::string> values;
};

std::vector<Axis> axes_of(const std::string& bench) {
  if (bench == "decode")
    return {{"BlockT", "type", {"16", "32", "64"}}, {"Batch", "int64", {"1", "8", "48"}}, {"Dtype", "string", {"bf16"}}};
  return {{"Elements", "int64", {"1024"}}};
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

ordered_json summary(const std::string& tag, const std::string& name, const std::string& hint, const char* type,
                     const std::string& value) {
  ordered_json s;
  s["tag"] = tag;
  s["name"] = name;
  s["description"] = name;
  if (!hint.empty()) s["hint"] = hint;
  s["data"] = ordered_json::array({{{"name", "value"}, {"type", type}, {"value", value}}});
  return s;
}

ordered_json axes_json(const std::string& bench) {
  ordered_json axes = ordered_json::array();
  for (const auto& a : axes_of(bench)) {
    ordered_json axis = {{"name", a.name}, {"type", a.type}, {"flags", ""}, {"values", ordered_json::array()}};
    for (const auto& v : a.values) {
      ordered_json value = {{"input_string", v}, {"description", ""}};
      if (a.type == "int64") value["value"] = std::stoll(v);
      if (a.type == "string") value["value"] = v;
      axis["values"].push_back(value);
    }
    axes.push_back(axis);
  }
  return axes;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& a : args) {
    if (a == "--jsonlist-devices") {
      ordered_json d = {{"id", 0},
                        {"name", "NVIDIA H200 (fake)"},
                        {"sm_version", 900},
                        {"ptx_version", 900},
                        {"sm_default_clock_rate", 1980000000},
                        {"number_of_sms", 132},
                        {"global_memory_size", 150121545728LL},
                        {"global_memory_bus_peak_clock_rate", 2619000000LL},
                        {"global_memory_bus_width", 6144},
                        {"l2_cache_size", 62914560},
                        {"shared_memory_per_block", 49152},
                        {"ecc_state", true}};
      std::cout << ordered_json({{"devices", {d}}}).dump(2) << "\n";
      return 0;
    }
    if (a == "--jsonlist-benches") {
      ordered_json list = {{"benchmarks", ordered_json::array()}};
      int index = 0;
      for (const char* name : {"decode", "copy"})
        list["benchmarks"].push_back({{"name", name}, {"index", index++}, {"axes", axes_json(name)}});
      std::cout << list.dump(2) << "\n";
      return 0;
    }
  }

  if (std::getenv("FAKE_NVBENCH_FAIL")) {
    std::cerr << "\nNVBench encountered an error:\n\ncudaErrorIllegalAddress: an illegal memory access was encountered\n";
    return 1;
  }
  std::string bench = "decode", json_path;
  std::map<std::string, std::string> set;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto next = [&]() { return i + 1 < args.size() ? args[++i] : std::string(); };
    if (a == "-b" || a == "--benchmark") bench = next();
    else if (a == "-a" || a == "--axis") {
      std::string spec = next();
      auto eq = spec.find('=');
      set[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else if (a == "--json") json_path = next();
    else if (a == "-d" || a == "--devices" || a == "--timeout") next();
  }

  // Every configuration of the axes (the ones set by -a fixed), as NVBench's
  // state generator makes them.
  std::vector<std::map<std::string, std::string>> configs = {{}};
  for (const auto& axis : axes_of(bench)) {
    std::vector<std::string> values = set.count(axis.name) ? std::vector<std::string>{set[axis.name]} : axis.values;
    std::vector<std::map<std::string, std::string>> grown;
    for (const auto& c : configs)
      for (const auto& v : values) {
        auto copy = c;
        copy[axis.name] = v;
        grown.push_back(copy);
      }
    configs = grown;
  }

  ordered_json states = ordered_json::array();
  for (const auto& c : configs) {
    ordered_json st;
    std::string name = "Device=0";
    ordered_json axis_values = ordered_json::array();
    for (const auto& axis : axes_of(bench)) {
      name += " " + axis.name + "=" + c.at(axis.name);
      axis_values.push_back({{"name", axis.name},
                             {"type", axis.type == "int64" ? "int64" : "string"},
                             {"value", c.at(axis.name)}});
    }
    st["name"] = name;
    st["device"] = 0;
    st["type_config_index"] = 0;
    st["axis_values"] = axis_values;
    double block = bench == "decode" ? std::stod(c.at("BlockT")) : 16;
    double batch = bench == "decode" ? std::stod(c.at("Batch")) : 1;
    if (block == 64 && batch == 8) {
      st["summaries"] = ordered_json::array();
      st["is_skipped"] = true;
      st["skip_reason"] = "not enough shared memory for BlockT=64";
    } else {
      double seconds = batch * (1 + block / 64) * 1e-6;
      st["summaries"] = {
          summary("nv/cold/sample_size", "Samples", "sample_size", "int64", "1234"),
          summary("nv/cold/time/cpu/mean", "CPU Time", "duration", "float64", num(seconds * 1.5)),
          summary("nv/cold/time/gpu/mean", "GPU Time", "duration", "float64", num(seconds)),
          summary("nv/cold/time/gpu/stdev/relative", "Noise", "percentage", "float64", "0.004"),
          summary("nv/cold/bw/item_rate", "Elem/s", "item_rate", "float64", num(batch * 2048 / seconds)),
          summary("nv/cold/sm_clock_rate/mean", "Clock Rate", "frequency", "float64", "1755000000"),
      };
      st["is_skipped"] = false;
    }
    states.push_back(st);
  }
  ordered_json root;
  root["meta"] = {{"argv", args}, {"version", {{"json", {{"major", 1}, {"minor", 0}, {"patch", 0}, {"string", "1.0.0"}}}}}};
  root["devices"] = ordered_json::array();
  root["benchmarks"] = {{{"name", bench}, {"index", 0}, {"axes", axes_json(bench)}, {"states", states}}};
  std::cout << "# " << bench << "\n\n| fake markdown table |\n";
  if (!json_path.empty()) std::ofstream(json_path) << root.dump(2) << "\n";
  return 0;
}
