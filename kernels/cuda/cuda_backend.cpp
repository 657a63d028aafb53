// The CUDA backend: the split-KV kernels of split_kv.cuh behind mla::Backend.
//
// A point's workload holds the KV cache (filled on the device with
// mla::kv_element, so the float64 reference regenerates any row on the host),
// q and indices of every input set, the outputs and the split partials. A
// trial replays a CUDA graph of many steps (split kernel, then combine when
// nsplit > 1), one input set per step in rotation, between two events; a
// probe kernel before and after reads SM 0's clock64 against %globaltimer.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_runtime_util.h"
#include "kernel_table.h"
#include "launch_plan.h"
#include "mla/backend.h"

#ifndef MLA_CUDA_ARCHS_BUILT
#define MLA_CUDA_ARCHS_BUILT "unknown"
#endif

namespace mla {
namespace cuda {
namespace {

constexpr float kLog2e = 1.4426950408889634f;
// Graph size cap: a trial of tiny steps gets more replays of fewer steps
// rather than a graph whose instantiation takes longer than the trial.
constexpr int kMaxStepsPerGraph = 8192;

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// "GPU-8-4-4-4-12 hex digits", as nvidia-smi -L prints the device's UUID.
std::string uuid_string(const cudaUUID_t& uuid) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

struct GraphKey {
  int block_t, num_warps, num_stages, target_ctas;
  double min_trial_ms;
  auto tie() const { return std::tie(block_t, num_warps, num_stages, target_ctas, min_trial_ms); }
  bool operator<(const GraphKey& o) const { return tie() < o.tie(); }
};

struct TimedGraph {
  GraphExec exec;
  int steps = 0;
};

class CudaWorkload final : public Workload {
 public:
  CudaWorkload(const Point& point, const CacheLayout& layout, HostInputs check, double working_set, float scale)
      : point_(point), layout_(layout), check_(std::move(check)), working_set_(working_set), scale_(scale) {}

  const Point& point() const override { return point_; }
  const CacheLayout& layout() const override { return layout_; }
  const HostInputs& check_inputs() const override { return check_; }
  double working_set_bytes() const override { return working_set_; }

  float scale() const { return scale_; }
  long long q_elems() const { return static_cast<long long>(point_.batch) * point_.heads * kDimQK; }
  long long index_elems() const { return static_cast<long long>(point_.batch) * point_.topk; }
  const std::uint16_t* q(int set) const { return q_.get() + set * q_elems(); }
  const std::int32_t* indices(int set) const { return indices_.get() + set * index_elems(); }

  // Grows the split partials to `o_floats` / `lse_floats`; graphs captured
  // with the old buffers are dropped.
  void ensure_partials(long long o_floats, long long lse_floats) {
    if (static_cast<long long>(o_part_.size()) >= o_floats && static_cast<long long>(lse_part_.size()) >= lse_floats)
      return;
    graphs_.clear();
    o_part_ = DeviceBuffer<float>(static_cast<std::size_t>(std::max<long long>(o_floats, o_part_.size())));
    lse_part_ = DeviceBuffer<float>(static_cast<std::size_t>(std::max<long long>(lse_floats, lse_part_.size())));
  }

  Point point_;
  CacheLayout layout_;
  HostInputs check_;
  double working_set_ = 0;
  float scale_ = 0;
  DeviceBuffer<std::uint8_t> kv_;          // rows of kv_row_bytes(point.dtype)
  DeviceBuffer<std::uint16_t> q_;          // [sets + 1][B, H, 576]
  DeviceBuffer<std::int32_t> indices_;     // [sets + 1][B, topk]
  DeviceBuffer<std::uint16_t> o_;
  DeviceBuffer<float> lse_;
  DeviceBuffer<float> o_part_;
  DeviceBuffer<float> lse_part_;
  DeviceBuffer<unsigned long long> stamps_;  // globaltimer, clock64 before; the same after
  std::map<GraphKey, TimedGraph> graphs_;
};

class CudaBackend final : public Backend {
 public:
  // The device is selected before the stream and events (members declared
  // after device_) are created on it.
  explicit CudaBackend(int device) : device_(select_device(device)) {
    MLA_CUDA_CHECK(cudaGetDeviceProperties(&prop_, device));
    auto attr = [&](cudaDeviceAttr a, const char* what) {
      int v = 0;
      check(cudaDeviceGetAttribute(&v, a, device), what);
      return v;
    };
    limits_.smem_per_block_optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, "cudaDevAttrMaxSharedMemoryPerBlockOptin");
    limits_.smem_per_sm = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, "cudaDevAttrMaxSharedMemoryPerMultiprocessor");
    limits_.smem_reserved_per_block = attr(cudaDevAttrReservedSharedMemoryPerBlock, "cudaDevAttrReservedSharedMemoryPerBlock");
    limits_.multiprocessors = attr(cudaDevAttrMultiProcessorCount, "cudaDevAttrMultiProcessorCount");
    clock_khz_ = attr(cudaDevAttrClockRate, "cudaDevAttrClockRate");
    mem_clock_khz_ = attr(cudaDevAttrMemoryClockRate, "cudaDevAttrMemoryClockRate");
    bus_width_ = attr(cudaDevAttrGlobalMemoryBusWidth, "cudaDevAttrGlobalMemoryBusWidth");
    l2_bytes_ = attr(cudaDevAttrL2CacheSize, "cudaDevAttrL2CacheSize");
    MLA_CUDA_CHECK(cudaDriverGetVersion(&driver_));
    MLA_CUDA_CHECK(cudaRuntimeGetVersion(&runtime_));
    // Fails with cudaErrorNoKernelImageForDevice when the build has no code for this device.
    cudaFuncAttributes fa{};
    MLA_CUDA_CHECK(cudaFuncGetAttributes(&fa, combine_kernel(1)));
    // Raise the dynamic shared-memory limit of every kernel that fits, once.
    for (const KernelShape& base : compiled_shapes())
      for (KvDtype dtype : kDtypes)
        for (int bh : kBlockHs) {
          KernelShape k = base;
          k.block_h = bh;
          k.dtype = dtype;
          if (!check_fit(k, limits_).fits) continue;
          MLA_CUDA_CHECK(cudaFuncSetAttribute(ops(k).kernel(bh), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              smem_layout(k).total));
        }
  }

  DeviceInfo device() const override {
    DeviceInfo d;
    d.backend = "cuda";
    d.name = prop_.name;
    d.multiprocessors = limits_.multiprocessors;
    d.cc_major = prop_.major;
    d.cc_minor = prop_.minor;
    d.l2_bytes = l2_bytes_;
    d.smem_per_block_optin = limits_.smem_per_block_optin;
    d.global_mem_bytes = static_cast<long long>(prop_.totalGlobalMem);
    d.sm_clock_khz = clock_khz_;
    d.mem_clock_khz = mem_clock_khz_;
    d.mem_bus_width_bits = bus_width_;
    d.driver_version = driver_;
    d.runtime_version = runtime_;
    d.uuid = uuid_string(prop_.uuid);
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof(bus), device_);
    d.extra = {
        {"driver_version", version_string(driver_)},
        {"runtime_version", version_string(runtime_)},
        {"smem_per_sm_bytes", std::to_string(limits_.smem_per_sm)},
        {"smem_reserved_per_block_bytes", std::to_string(limits_.smem_reserved_per_block)},
        {"registers_per_sm", std::to_string(prop_.regsPerMultiprocessor)},
        {"max_threads_per_sm", std::to_string(prop_.maxThreadsPerMultiProcessor)},
        {"pci_bus_id", bus},
        {"cuda_archs_built", MLA_CUDA_ARCHS_BUILT},
        {"default_sm_clock_source", "cudaDevAttrClockRate"},
    };
    return d;
  }

  VariantReport describe(const VariantParams& v) const override {
    VariantReport r;
    if (!is_compiled(v)) {
      r.feasible = false;
      r.reason = not_compiled(v);
      return r;
    }
    // Every kernel of the variant: both dtypes, both head-tile heights. The
    // variant is feasible when one of them fits (the point's dtype and heads
    // pick the kernel; plan_launch refuses a point whose kernel does not fit).
    std::string reasons;
    bool any_fits = false;
    for (KvDtype dtype : kDtypes)
    for (int bh : kBlockHs) {
      const KernelShape k{v.block_t, v.num_warps, v.num_stages, bh, dtype};
      const Fit fit = check_fit(k, limits_);
      cudaFuncAttributes fa{};
      const void* fn = ops(k).kernel(bh);
      MLA_CUDA_CHECK(cudaFuncGetAttributes(&fa, fn));
      KernelResources res;
      res.kernel = kernel_name(k);
      res.dtype = to_string(dtype);
      res.fits_sm120 = fits_sm120(k);
      res.block_h = bh;
      res.threads_per_block = 32 * v.num_warps;
      res.registers_per_thread = fa.numRegs;
      res.static_smem_bytes = static_cast<int>(fa.sharedSizeBytes);
      res.dynamic_smem_bytes = smem_layout(k).total;
      res.local_bytes_per_thread = static_cast<int>(fa.localSizeBytes);
      res.max_blocks_per_sm = fit.fits ? occupancy(fn, res.threads_per_block, res.dynamic_smem_bytes) : 0;
      if (fit.fits) {
        any_fits = true;
      } else {
        reasons += (reasons.empty() ? "" : "; ") + res.kernel + " " + fit.reason;
      }
      r.kernels.push_back(res);
    }
    for (int groups : {1, kCombineMaxGroups}) {
      cudaFuncAttributes fa{};
      const void* fn = combine_kernel(groups);
      MLA_CUDA_CHECK(cudaFuncGetAttributes(&fa, fn));
      const int threads = groups * kCombineColumnThreads;
      KernelResources res;
      res.kernel = "combine<g" + std::to_string(groups) + ">";
      res.threads_per_block = threads;
      res.registers_per_thread = fa.numRegs;
      res.static_smem_bytes = static_cast<int>(fa.sharedSizeBytes);
      res.local_bytes_per_thread = static_cast<int>(fa.localSizeBytes);
      res.max_blocks_per_sm = occupancy(fn, threads, 0);
      r.kernels.push_back(res);
    }
    r.feasible = any_fits;
    if (!any_fits) r.reason = reasons;
    return r;
  }

  LaunchReport plan_launch(const VariantParams& v, const Point& p) const override {
    LaunchReport r;
    if (!is_compiled(v)) {
      r.feasible = false;
      r.reason = not_compiled(v);
      return r;
    }
    const LaunchShape ls = launch_shape(v, p, limits_.multiprocessors);
    r.split = ls.split;
    r.target_ctas = resolve_target_ctas(v.target_ctas, limits_.multiprocessors);
    r.threads_per_block = ls.split_threads;
    r.smem_bytes = ls.split_smem;
    const Fit fit = check_fit(ls.kernel, limits_);
    if (!fit.fits) {
      r.feasible = false;
      r.reason = kernel_name(ls.kernel) + " " + fit.reason;
      return r;
    }
    if (ls.split_grid > 0x7FFFFFFFLL) {
      r.feasible = false;
      r.reason = "grid of " + std::to_string(ls.split_grid) + " CTAs exceeds 2^31 - 1";
      return r;
    }
    r.blocks_per_sm = occupancy(ops(ls.kernel).kernel(ls.kernel.block_h), ls.split_threads, ls.split_smem);
    return r;
  }

  std::unique_ptr<Workload> prepare(const Point& p, const WorkloadSpec& spec) override {
    try {
      return prepare_inputs(p, spec);
    } catch (const std::invalid_argument& e) {  // make_inputs refusing the layout
      throw Error(std::string("cuda: prepare: ") + e.what());
    }
  }

  CheckOutputs run_check(const VariantParams& v, Workload& workload) override {
    return check_step(v, as_cuda(workload));
  }

  TrialTiming time_trial(const VariantParams& v, Workload& workload, double min_trial_ms) override {
    return timed_replay(v, as_cuda(workload), min_trial_ms);
  }

 private:
  std::unique_ptr<Workload> prepare_inputs(const Point& p, const WorkloadSpec& spec) {
    CacheLayout layout;
    layout.batch = p.batch;
    layout.context_rows = spec.context_rows > 0 ? spec.context_rows : std::max(4 * p.topk, 4096);
    layout.sets = input_sets_for(p, l2_bytes_, spec.sets);

    const double row_bytes = kv_row_bytes(p.dtype);
    auto device_bytes = [&](int sets) {
      const double sets1 = sets + 1.0;
      return sets1 * p.batch * layout.context_rows * row_bytes + sets1 * p.batch * p.heads * kDimQK * 2.0 +
             sets1 * p.batch * p.topk * 4.0 + p.batch * p.heads * (kDimV * 2.0 + 4.0);
    };
    std::size_t free_bytes = 0, total_bytes = 0;
    MLA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double budget = 0.7 * static_cast<double>(free_bytes);
    if (device_bytes(layout.sets) > budget) {
      if (spec.sets > 0)
        throw Error("cuda: prepare: " + std::to_string(layout.sets) + " input sets need " +
                    std::to_string(device_bytes(layout.sets) / 1e9) + " GB; " + std::to_string(free_bytes / 1e9) +
                    " GB are free");
      while (layout.sets > 2 && device_bytes(layout.sets) > budget) --layout.sets;
      if (device_bytes(layout.sets) > budget)
        throw Error("cuda: prepare: the point needs " + std::to_string(device_bytes(layout.sets) / 1e9) +
                    " GB of device memory; " + std::to_string(free_bytes / 1e9) + " GB are free");
    }

    HostInputs check = make_inputs(p, layout, spec.seed, layout.check_set(), spec.check_masked_fraction, spec.softmax_scale);
    auto w = std::make_unique<CudaWorkload>(p, layout, check, layout.sets * bytes_per_step(p), spec.softmax_scale);
    const int all_sets = layout.sets + 1;
    w->kv_ = DeviceBuffer<std::uint8_t>(static_cast<std::size_t>(layout.total_rows()) *
                                        static_cast<std::size_t>(kv_row_bytes(p.dtype)));
    w->q_ = DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(all_sets * w->q_elems()));
    w->indices_ = DeviceBuffer<std::int32_t>(static_cast<std::size_t>(all_sets * w->index_elems()));
    w->o_ = DeviceBuffer<std::uint16_t>(static_cast<std::size_t>(p.batch) * p.heads * kDimV);
    w->lse_ = DeviceBuffer<float>(static_cast<std::size_t>(p.batch) * p.heads);
    w->stamps_ = DeviceBuffer<unsigned long long>(4);

    launch_fill_kv(w->kv_.get(), layout.total_rows(), p.dtype, spec.seed, stream_.get());
    check_launch("fill_kv launch");
    for (int set = 0; set < all_sets; ++set) {
      const HostInputs in = set == layout.check_set()
                                ? check
                                : make_inputs(p, layout, spec.seed, set, 0.0, spec.softmax_scale);
      // Synchronous copies from pageable memory: `in` dies at the end of the iteration.
      MLA_CUDA_CHECK(cudaMemcpy(w->q_.get() + set * w->q_elems(), in.q.data(), in.q.size() * 2, cudaMemcpyHostToDevice));
      MLA_CUDA_CHECK(cudaMemcpy(w->indices_.get() + set * w->index_elems(), in.indices.data(), in.indices.size() * 4,
                                cudaMemcpyHostToDevice));
    }
    MLA_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    return w;
  }

  // Poisons the outputs, runs one step on the check set, returns what it wrote.
  CheckOutputs check_step(const VariantParams& v, CudaWorkload& w) {
    const LaunchShape ls = runnable_shape(v, w.point());
    w.ensure_partials(ls.partial_o_floats, ls.partial_lse_floats);
    // Poison: 0xFFFF is a bf16 NaN, 0xFFFFFFFF an fp32 NaN; an element no
    // kernel writes stays NaN and fails the comparison.
    cudaStream_t st = stream_.get();
    MLA_CUDA_CHECK(cudaMemsetAsync(w.o_.get(), 0xFF, w.o_.bytes(), st));
    MLA_CUDA_CHECK(cudaMemsetAsync(w.lse_.get(), 0xFF, w.lse_.bytes(), st));
    if (w.o_part_.size() > 0) MLA_CUDA_CHECK(cudaMemsetAsync(w.o_part_.get(), 0xFF, w.o_part_.bytes(), st));
    if (w.lse_part_.size() > 0) MLA_CUDA_CHECK(cudaMemsetAsync(w.lse_part_.get(), 0xFF, w.lse_part_.bytes(), st));
    enqueue_step(ls, w, w.layout().check_set(), st);
    MLA_CUDA_CHECK(cudaStreamSynchronize(st));
    CheckOutputs out;
    out.o.resize(w.o_.size());
    out.lse.resize(w.lse_.size());
    MLA_CUDA_CHECK(cudaMemcpy(out.o.data(), w.o_.get(), w.o_.bytes(), cudaMemcpyDeviceToHost));
    MLA_CUDA_CHECK(cudaMemcpy(out.lse.data(), w.lse_.get(), w.lse_.bytes(), cudaMemcpyDeviceToHost));
    return out;
  }

  TrialTiming timed_replay(const VariantParams& v, CudaWorkload& w, double min_trial_ms) {
    const LaunchShape ls = runnable_shape(v, w.point());
    w.ensure_partials(ls.partial_o_floats, ls.partial_lse_floats);
    cudaStream_t st = stream_.get();
    const GraphKey key{v.block_t, v.num_warps, v.num_stages, resolve_target_ctas(v.target_ctas, limits_.multiprocessors),
                       min_trial_ms};
    auto it = w.graphs_.find(key);
    if (it == w.graphs_.end()) it = w.graphs_.emplace(key, build_timed_graph(ls, w, min_trial_ms)).first;
    const TimedGraph& graph = it->second;

    MLA_CUDA_CHECK(cudaMemsetAsync(w.stamps_.get(), 0, w.stamps_.bytes(), st));
    launch_timestamps(w.stamps_.get(), limits_.multiprocessors, st);
    check_launch("timestamps launch");
    MLA_CUDA_CHECK(cudaEventRecord(start_.get(), st));
    MLA_CUDA_CHECK(cudaGraphLaunch(graph.exec.get(), st));
    MLA_CUDA_CHECK(cudaEventRecord(stop_.get(), st));
    launch_timestamps(w.stamps_.get() + 2, limits_.multiprocessors, st);
    check_launch("timestamps launch");
    MLA_CUDA_CHECK(cudaStreamSynchronize(st));
    float ms = 0;
    MLA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    unsigned long long stamps[4] = {};
    MLA_CUDA_CHECK(cudaMemcpy(stamps, w.stamps_.get(), sizeof(stamps), cudaMemcpyDeviceToHost));

    TrialTiming t;
    t.elapsed_us = ms * 1000.0;
    t.steps = graph.steps;
    t.default_clock_mhz = clock_khz_ / 1000.0;
    if (stamps[0] != 0 && stamps[2] > stamps[0] && stamps[3] > stamps[1])
      t.sm_clock_mhz = static_cast<double>(stamps[3] - stamps[1]) / static_cast<double>(stamps[2] - stamps[0]) * 1000.0;
    return t;
  }

  static int select_device(int device) {
    MLA_CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  static CudaWorkload& as_cuda(Workload& w) {
    auto* c = dynamic_cast<CudaWorkload*>(&w);
    if (c == nullptr) throw Error("cuda: the workload was not prepared by the CUDA backend");
    return *c;
  }

  static std::string not_compiled(const VariantParams& v) {
    return "not compiled: block_t " + std::to_string(v.block_t) + ", num_warps " + std::to_string(v.num_warps) +
           ", num_stages " + std::to_string(v.num_stages) +
           " (compiled: block_t 16, 32, 64; num_warps 4, 8; num_stages 1, 2, 3)";
  }

  static SplitKernelOps ops(const KernelShape& k) {
    bool ok = false;
    const SplitKernelOps o = find_split_kernel(k.dtype, k.block_t, k.num_warps, k.num_stages, &ok);
    if (!ok) throw Error("cuda: " + kernel_name(k) + " is not compiled");
    return o;
  }

  static int occupancy(const void* fn, int threads, int smem) {
    int n = 0;
    MLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, threads, static_cast<std::size_t>(smem)));
    return n;
  }

  LaunchShape runnable_shape(const VariantParams& v, const Point& p) const {
    const LaunchReport r = plan_launch(v, p);
    if (!r.feasible) throw Error("cuda: cannot run variant at this point: " + r.reason);
    return launch_shape(v, p, limits_.multiprocessors);
  }

  void enqueue_step(const LaunchShape& ls, CudaWorkload& w, int set, cudaStream_t st) const {
    const Point& p = w.point();
    SplitArgs a;
    a.q = w.q(set);
    a.kv = w.kv_.get();
    a.indices = w.indices(set);
    a.o = w.o_.get();
    a.lse = w.lse_.get();
    a.o_part = w.o_part_.get();
    a.lse_part = w.lse_part_.get();
    a.batch = p.batch;
    a.heads = p.heads;
    a.topk = p.topk;
    a.tiles = ls.split.tiles;
    a.nsplit = ls.split.nsplit;
    a.head_groups = ls.split.head_groups;
    a.block_h = ls.split.block_h;
    a.scale_log2 = w.scale() * kLog2e;
    ops(ls.kernel).launch(ls.kernel.block_h, a, static_cast<unsigned>(ls.split_grid), ls.split_smem, st);
    check_launch("split_kv launch");
    if (ls.combine) {
      CombineArgs c;
      c.o_part = w.o_part_.get();
      c.lse_part = w.lse_part_.get();
      c.o = w.o_.get();
      c.lse = w.lse_.get();
      c.nsplit = ls.split.nsplit;
      check(launch_combine(c, static_cast<unsigned>(ls.combine_grid), st), "combine launch");
      check_launch("combine launch");
    }
  }

  // A step's time from a few launches outside a graph (the first round loads
  // the module and wakes the clocks).
  double estimate_step_us(const LaunchShape& ls, CudaWorkload& w) {
    cudaStream_t st = stream_.get();
    const int sets = w.layout().sets;
    const int probe = std::max(sets, 8);
    for (int i = 0; i < probe; ++i) enqueue_step(ls, w, i % sets, st);  // loads the module, warms the clocks
    MLA_CUDA_CHECK(cudaEventRecord(start_.get(), st));
    for (int i = 0; i < probe; ++i) enqueue_step(ls, w, i % sets, st);
    MLA_CUDA_CHECK(cudaEventRecord(stop_.get(), st));
    MLA_CUDA_CHECK(cudaStreamSynchronize(st));
    float ms = 0;
    MLA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return ms * 1000.0 / probe;
  }

  // A graph of enough steps for one trial, rotating through the timing sets.
  TimedGraph capture_graph(const LaunchShape& ls, CudaWorkload& w, double min_trial_ms, double step_us) {
    cudaStream_t st = stream_.get();
    const int sets = w.layout().sets;
    TimedGraph g;
    g.steps = steps_for(step_us, min_trial_ms, sets, kMaxStepsPerGraph);
    MLA_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i < g.steps; ++i) enqueue_step(ls, w, i % sets, st);
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(st, &broken);
      if (broken != nullptr) cudaGraphDestroy(broken);
      throw;
    }
    cudaGraph_t raw = nullptr;
    MLA_CUDA_CHECK(cudaStreamEndCapture(st, &raw));
    const Graph graph(raw);
    cudaGraphExec_t exec = nullptr;
    MLA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
    g.exec = GraphExec(exec);
    return g;
  }

  // The warm-up replay also checks the estimate: per-launch overhead inflates
  // it for tiny steps, so a graph that ran short is captured again, longer.
  TimedGraph build_timed_graph(const LaunchShape& ls, CudaWorkload& w, double min_trial_ms) {
    cudaStream_t st = stream_.get();
    TimedGraph g = capture_graph(ls, w, min_trial_ms, estimate_step_us(ls, w));
    for (int attempt = 0; attempt < 3; ++attempt) {
      MLA_CUDA_CHECK(cudaEventRecord(start_.get(), st));
      MLA_CUDA_CHECK(cudaGraphLaunch(g.exec.get(), st));
      MLA_CUDA_CHECK(cudaEventRecord(stop_.get(), st));
      MLA_CUDA_CHECK(cudaStreamSynchronize(st));
      float ms = 0;
      MLA_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
      if (ms >= 0.95 * min_trial_ms || g.steps >= kMaxStepsPerGraph / w.layout().sets * w.layout().sets) break;
      g = capture_graph(ls, w, min_trial_ms, ms * 1000.0 / g.steps);
    }
    return g;
  }

  int device_ = 0;
  cudaDeviceProp prop_{};
  DeviceLimits limits_;
  int clock_khz_ = 0, mem_clock_khz_ = 0, bus_width_ = 0, l2_bytes_ = 0;
  int driver_ = 0, runtime_ = 0;
  Stream stream_;
  Event start_, stop_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(int device, std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why != nullptr) *why = std::string("no CUDA device: ") + cudaGetErrorString(err);
    return nullptr;
  }
  if (device < 0 || device >= count) {
    if (why != nullptr) *why = "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " present)";
    return nullptr;
  }
  try {
    return std::make_unique<cuda::CudaBackend>(device);
  } catch (const Error& e) {
    if (why != nullptr) *why = e.what();
    return nullptr;
  }
}

}  // namespace mla
