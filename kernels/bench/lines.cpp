#include "lines.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace mla::bench {
namespace {

// CUDA's integer versions: 12080 -> "12.8".
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

LineWriter::LineWriter(std::FILE* out, const Faults& faults) : out_(out), faults_(faults) {}

void LineWriter::raw(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void LineWriter::write(const Line& line) {
  raw(line.dump());
  if (line.value("kind", "") == "trial") {
    ++trials_;
    apply_faults();
  }
}

void LineWriter::apply_faults() {
  if (faults_.garbage_after_trials && *faults_.garbage_after_trials == trials_ && !garbage_done_) {
    garbage_done_ = true;
    raw("MLA_BENCH_FAULT garbage: this line is not JSON {");
  }
  if (faults_.crash_after_trials && *faults_.crash_after_trials == trials_) std::abort();
  if (faults_.hang_after_trials && *faults_.hang_after_trials == trials_)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

Line header_line(const DeviceInfo& device, const std::string& backend_reason, const BuildInfo& build,
                 std::uint64_t seed) {
  Line dev;
  dev["name"] = device.name;
  dev["multiprocessors"] = std::max(1, device.multiprocessors);
  if (device.cc_major > 0) dev["compute_capability"] = std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor);
  if (device.l2_bytes > 0) dev["l2_bytes"] = device.l2_bytes;
  if (device.smem_per_block_optin > 0) dev["smem_per_block_optin_bytes"] = device.smem_per_block_optin;
  if (device.global_mem_bytes > 0) dev["global_mem_bytes"] = device.global_mem_bytes;
  if (device.sm_clock_khz > 0) dev["sm_clock_mhz"] = device.sm_clock_khz / 1000.0;
  if (device.mem_clock_khz > 0) dev["mem_clock_mhz"] = device.mem_clock_khz / 1000.0;
  if (device.mem_bus_width_bits > 0) dev["mem_bus_width_bits"] = device.mem_bus_width_bits;
  if (device.driver_version > 0) dev["driver_version"] = cuda_version(device.driver_version);
  if (device.runtime_version > 0) dev["runtime_version"] = cuda_version(device.runtime_version);
  if (!device.extra.empty()) {
    Line extra = Line::object();
    for (const auto& [key, value] : device.extra) extra[key] = value;
    dev["extra"] = extra;
  }

  Line b;
  b["id"] = build.id;
  b["compiler"] = build.compiler;
  if (!build.cuda_compiler.empty()) b["cuda_compiler"] = build.cuda_compiler;
  if (!build.cuda_archs.empty()) {
    Line archs = Line::array();
    std::size_t start = 0;
    while (start <= build.cuda_archs.size()) {
      const std::size_t end = std::min(build.cuda_archs.find(';', start), build.cuda_archs.size());
      if (end > start) archs.push_back(build.cuda_archs.substr(start, end - start));
      start = end + 1;
    }
    b["cuda_archs"] = archs;
  }
  b["flags"] = build.flags;
  if (!build.binary_hash.empty()) b["binary_hash"] = build.binary_hash;

  Line line;
  line["kind"] = "header";
  line["schema_version"] = 1;
  line["bench"] = "mla_bench 1";
  line["backend"] = device.backend;
  line["backend_reason"] = backend_reason;
  line["seed"] = seed;
  line["device"] = dev;
  line["build"] = b;
  return line;
}

Line params_json(const VariantParams& params) {
  Line p;
  p["block_t"] = params.block_t;
  p["num_warps"] = params.num_warps;
  p["num_stages"] = params.num_stages;
  p["target_ctas"] = params.target_ctas;
  return p;
}

Line variant_line(const PlanVariant& variant, const VariantReport& report) {
  Line line;
  line["kind"] = "variant";
  line["variant"] = variant.name;
  line["params"] = params_json(variant.params);
  line["status"] = report.feasible ? "ok" : "infeasible";
  if (!report.feasible) line["reason"] = report.reason.empty() ? "the backend gave no reason" : report.reason;
  line["ignored_params"] = report.ignored_params;
  Line kernels = Line::array();
  for (const KernelResources& k : report.kernels) {
    Line r;
    r["kernel"] = k.kernel;
    r["block_h"] = std::max(0, k.block_h);
    r["threads_per_block"] = std::max(0, k.threads_per_block);
    r["registers_per_thread"] = std::max(0, k.registers_per_thread);
    r["static_smem_bytes"] = std::max(0, k.static_smem_bytes);
    r["dynamic_smem_bytes"] = std::max(0, k.dynamic_smem_bytes);
    r["local_bytes_per_thread"] = std::max(0, k.local_bytes_per_thread);
    r["max_blocks_per_sm"] = std::max(0, k.max_blocks_per_sm);
    kernels.push_back(r);
  }
  line["kernels"] = kernels;
  return line;
}

Line check_line(const std::string& variant, const std::string& point, const CheckReport& report) {
  Line line;
  line["kind"] = "check";
  line["variant"] = variant;
  line["point"] = point;
  line["status"] = report.status;
  if (!report.reason.empty() || report.status != "ok")
    line["reason"] = report.reason.empty() ? "the backend gave no reason" : report.reason;
  if (report.comparison) {
    const Comparison& c = *report.comparison;
    // JSON has no NaN or infinity: null says "not a number".
    line["rel_l2_o"] = std::isfinite(c.rel_l2_o) ? Line(c.rel_l2_o) : Line(nullptr);
    line["max_abs_lse"] = std::isfinite(c.max_abs_lse) ? Line(c.max_abs_lse) : Line(nullptr);
    line["nonfinite"] = c.nonfinite;
  }
  if (report.tolerance)
    line["tolerance"] = {{"max_rel_l2_o", report.tolerance->max_rel_l2_o}, {"max_abs_lse", report.tolerance->max_abs_lse}};
  if (report.launch) {
    const LaunchReport& l = *report.launch;
    Line launch;
    if (l.feasible) {
      launch["block_h"] = l.split.block_h;
      launch["head_groups"] = l.split.head_groups;
      launch["tiles"] = l.split.tiles;
      launch["nsplit"] = l.split.nsplit;
      launch["ctas"] = l.split.ctas;
    }
    launch["target_ctas"] = l.target_ctas;
    if (l.feasible) {
      launch["threads_per_block"] = l.threads_per_block;
      launch["smem_bytes"] = l.smem_bytes;
      launch["blocks_per_sm"] = l.blocks_per_sm;
    }
    line["launch"] = launch;
  }
  if (report.working_set_bytes) line["working_set_bytes"] = *report.working_set_bytes;
  if (report.input_sets) line["input_sets"] = *report.input_sets;
  return line;
}

Line trial_line(const std::string& variant, const std::string& point, long long trial, const Point& shape,
                const TrialTiming& timing) {
  const double time_us = timing.time_us();
  const double seconds = time_us * 1e-6;
  Line line;
  line["kind"] = "trial";
  line["variant"] = variant;
  line["point"] = point;
  line["trial"] = trial;
  line["time_us"] = time_us;
  line["steps"] = timing.steps;
  line["tokens_per_s"] = shape.batch / seconds;
  line["bytes_per_s"] = bytes_per_step(shape) / seconds;
  line["flops_per_s"] = flops_per_step(shape) / seconds;
  const bool clock_known = timing.sm_clock_mhz.has_value() && std::isfinite(*timing.sm_clock_mhz);
  line["sm_clock_mhz"] = clock_known ? Line(*timing.sm_clock_mhz) : Line(nullptr);
  line["throttled"] = clock_known && timing.default_clock_mhz.has_value() && *timing.default_clock_mhz > 0 &&
                      *timing.sm_clock_mhz < 0.75 * *timing.default_clock_mhz;
  return line;
}

Line skipped_line(const std::string& variant, const std::string& point, const std::string& status,
                  const std::string& reason) {
  Line line;
  line["kind"] = "skipped";
  line["variant"] = variant;
  line["point"] = point;
  line["status"] = status;
  line["reason"] = reason;
  return line;
}

Line footer_line(long long trials, double wall_s) {
  Line line;
  line["kind"] = "footer";
  line["trials"] = trials;
  line["wall_s"] = wall_s;
  return line;
}

Line error_line(const std::string& where, const std::string& message) {
  Line line;
  line["kind"] = "error";
  if (!where.empty()) line["where"] = where;
  line["message"] = message;
  return line;
}

}  // namespace mla::bench
