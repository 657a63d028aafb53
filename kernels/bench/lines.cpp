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

// Names and messages may come from the plan or the OS in any bytes: a line
// must still be written (with U+FFFD), never an exception out of the bench.
void LineWriter::write(const Line& line) {
  raw(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
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

Dialect Dialect::of(const Plan& plan) {
  Dialect d;
  d.version = plan.schema_version;
  for (const MetricDecl& m : plan.metrics) {
    bool lower = false;
    if (is_known_metric(m.name, &lower)) d.trial_metrics.push_back(m.name);
  }
  return d;
}

Line header_line(const Dialect& dialect, const DeviceInfo& device, const std::string& backend_reason,
                 const BuildInfo& build, std::uint64_t seed) {
  const bool v2 = dialect.version == 2;
  Line dev;
  dev["name"] = device.name;
  if (v2 && !device.uuid.empty()) dev["uuid"] = device.uuid;
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
  line["schema_version"] = v2 ? 2 : 1;
  line["bench"] = v2 ? "mla_bench 2" : "mla_bench 1";
  line["backend"] = device.backend;
  line["backend_reason"] = backend_reason;
  if (v2) {
    // How trials are timed: CUDA events around a graph replay on the GPU;
    // the host's steady clock around the steps on the CPU.
    const bool gpu = device.backend == "cuda";
    line["timer"] = gpu ? "cuda_events" : "wall_clock";
    line["timer_note"] = gpu ? "CUDA events around one replay of a CUDA graph of decode steps"
                             : "steady clock around a batch of decode steps on the CPU backend";
  }
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

namespace {

// For people: where the variant's split kernels fit a sm_120 card (99 KB of
// shared memory a block), per KV dtype: "yes", "H <= 16 only" (the 16-row
// head tile fits, the 32-row one does not) or "no".
Line sm120_summary(const VariantReport& report) {
  Line out = Line::object();
  for (const char* dtype : {"bf16", "fp8"}) {
    bool any = false, fits16 = false, fits32 = false;
    for (const KernelResources& k : report.kernels) {
      if (k.dtype != dtype || !k.fits_sm120) continue;
      any = true;
      (k.block_h <= 16 ? fits16 : fits32) = *k.fits_sm120;
    }
    if (any) out[dtype] = fits16 && fits32 ? "yes" : fits16 ? "H <= 16 only" : fits32 ? "H > 16 only" : "no";
  }
  return out;
}

}  // namespace

Line variant_line(const Dialect& dialect, const PlanVariant& variant, const VariantReport& report) {
  const bool v2 = dialect.version == 2;
  Line line;
  line["kind"] = "variant";
  line["variant"] = variant.name;
  line["params"] = params_json(variant.params);
  line["status"] = report.feasible ? "ok" : "infeasible";
  if (!report.feasible) line["reason"] = report.reason.empty() ? "the backend gave no reason" : report.reason;
  line["ignored_params"] = report.ignored_params;
  if (v2) {
    Line resources = Line::object();
    const Line sm120 = sm120_summary(report);
    if (!sm120.empty()) resources["fits_sm120"] = sm120;
    line["resources"] = resources;
  }
  Line kernels = Line::array();
  for (const KernelResources& k : report.kernels) {
    Line r;
    r["kernel"] = k.kernel;
    if (v2 && !k.dtype.empty()) r["dtype"] = k.dtype;
    r["block_h"] = std::max(0, k.block_h);
    r["threads_per_block"] = std::max(0, k.threads_per_block);
    r["registers_per_thread"] = std::max(0, k.registers_per_thread);
    r["static_smem_bytes"] = std::max(0, k.static_smem_bytes);
    r["dynamic_smem_bytes"] = std::max(0, k.dynamic_smem_bytes);
    r["local_bytes_per_thread"] = std::max(0, k.local_bytes_per_thread);
    r["max_blocks_per_sm"] = std::max(0, k.max_blocks_per_sm);
    if (v2 && k.fits_sm120) r["fits_sm120"] = *k.fits_sm120;
    kernels.push_back(r);
  }
  line["kernels"] = kernels;
  return line;
}

namespace {

Line launch_json(const LaunchReport& l) {
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
  return launch;
}

// JSON has no NaN or infinity: null says "not a number".
Line finite_or_null(double x) { return std::isfinite(x) ? Line(x) : Line(nullptr); }

}  // namespace

Line check_line(const Dialect& dialect, const std::string& variant, const std::string& point, const CheckReport& report) {
  Line line;
  line["kind"] = "check";
  line["variant"] = variant;
  line["point"] = point;
  line["status"] = report.status;
  if (!report.reason.empty() || report.status != "ok")
    line["reason"] = report.reason.empty() ? "the backend gave no reason" : report.reason;
  if (dialect.version == 2) {
    // The errors measured and the bound each was held to, by the same names.
    if (report.comparison) {
      const Comparison& c = *report.comparison;
      line["errors"] = {{"rel_l2_o", finite_or_null(c.rel_l2_o)},
                        {"max_abs_lse", finite_or_null(c.max_abs_lse)},
                        {"nonfinite", c.nonfinite},
                        {"masked_rows_wrong", c.masked_rows_wrong}};
    }
    if (report.tolerance)
      line["tolerance"] = {{"rel_l2_o", report.tolerance->max_rel_l2_o},
                           {"max_abs_lse", report.tolerance->max_abs_lse},
                           {"nonfinite", 0},
                           {"masked_rows_wrong", 0}};
    Line detail = Line::object();
    if (report.launch) detail["launch"] = launch_json(*report.launch);
    if (report.working_set_bytes) detail["working_set_bytes"] = *report.working_set_bytes;
    if (report.input_sets) detail["input_sets"] = *report.input_sets;
    if (!detail.empty()) line["detail"] = detail;
    return line;
  }
  if (report.comparison) {
    const Comparison& c = *report.comparison;
    line["rel_l2_o"] = finite_or_null(c.rel_l2_o);
    line["max_abs_lse"] = finite_or_null(c.max_abs_lse);
    line["nonfinite"] = c.nonfinite;
  }
  if (report.tolerance)
    line["tolerance"] = {{"max_rel_l2_o", report.tolerance->max_rel_l2_o}, {"max_abs_lse", report.tolerance->max_abs_lse}};
  if (report.launch) line["launch"] = launch_json(*report.launch);
  if (report.working_set_bytes) line["working_set_bytes"] = *report.working_set_bytes;
  if (report.input_sets) line["input_sets"] = *report.input_sets;
  return line;
}

Line trial_line(const Dialect& dialect, const std::string& variant, const std::string& point, long long trial,
                const Point& shape, const TrialTiming& timing) {
  const double time_us = timing.time_us();
  const double seconds = time_us * 1e-6;
  const auto metric = [&](const std::string& name) {
    if (name == "time_us") return time_us;
    if (name == "tokens_per_s") return shape.batch / seconds;
    if (name == "bytes_per_s") return bytes_per_step(shape) / seconds;
    return flops_per_step(shape) / seconds;  // flops_per_s
  };
  const bool clock_known = timing.sm_clock_mhz.has_value() && std::isfinite(*timing.sm_clock_mhz);
  const bool throttled = clock_known && timing.default_clock_mhz.has_value() && *timing.default_clock_mhz > 0 &&
                         *timing.sm_clock_mhz < 0.75 * *timing.default_clock_mhz;
  Line line;
  line["kind"] = "trial";
  line["variant"] = variant;
  line["point"] = point;
  line["trial"] = trial;
  if (dialect.version == 2) {
    Line metrics = Line::object();
    for (const std::string& name : dialect.trial_metrics) metrics[name] = metric(name);
    line["metrics"] = metrics;
    line["steps"] = timing.steps;
    line["clock_mhz"] = clock_known ? Line(*timing.sm_clock_mhz) : Line(nullptr);
    line["throttled"] = throttled;
    return line;
  }
  line["time_us"] = time_us;
  line["steps"] = timing.steps;
  line["tokens_per_s"] = metric("tokens_per_s");
  line["bytes_per_s"] = metric("bytes_per_s");
  line["flops_per_s"] = metric("flops_per_s");
  line["sm_clock_mhz"] = clock_known ? Line(*timing.sm_clock_mhz) : Line(nullptr);
  line["throttled"] = throttled;
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
