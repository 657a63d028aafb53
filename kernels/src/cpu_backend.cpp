// The CPU backend: the split-KV algorithm of cpu_split_kv.h on a persistent
// pool of worker threads, over a KV cache laid out as CacheLayout says.
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cstdint>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "cpu_split_kv.h"
#include "host_info.h"
#include "simd.h"
#include "mla/backend.h"
#include "mla/cpu_backend.h"
#include "thread_pool.h"

namespace mla {
namespace {

constexpr int kMaxSets = 1024;  // bounds q/indices memory for tiny points

// The KV cache's memory: reserved, never touched by allocation, so only the
// pages of rows that some index selects are ever faulted in. On Linux it asks
// for transparent huge pages: one fault per 2 MiB instead of 512 (faults
// dominated preparing a large batch), and fewer TLB misses in the gather.
class PoolMemory {
 public:
  explicit PoolMemory(std::size_t bytes) : bytes_(bytes + kHuge) {
#if defined(__linux__)
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    base_ = p;
    const auto aligned = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~static_cast<std::uintptr_t>(kHuge - 1);
    data_ = reinterpret_cast<std::uint8_t*>(aligned);
    madvise(data_, bytes, MADV_HUGEPAGE);  // advice only: without THP it is plain pages
#else
    data_ = new std::uint8_t[bytes];
#endif
  }
  ~PoolMemory() {
#if defined(__linux__)
    munmap(base_, bytes_);
#else
    delete[] data_;
#endif
  }
  PoolMemory(const PoolMemory&) = delete;
  PoolMemory& operator=(const PoolMemory&) = delete;
  std::uint8_t* data() const { return data_; }

 private:
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  std::size_t bytes_;
  void* base_ = nullptr;
  std::uint8_t* data_ = nullptr;
};

class CpuWorkload final : public Workload {
 public:
  const Point& point() const override { return point_; }
  const CacheLayout& layout() const override { return layout_; }
  const HostInputs& check_inputs() const override { return sets_.back(); }
  double working_set_bytes() const override { return working_set_bytes_; }

  Point point_;
  CacheLayout layout_;
  std::unique_ptr<PoolMemory> kv_;  // total_rows rows of kv_row_bytes(dtype); only selected rows are ever written or read
  std::vector<HostInputs> sets_;         // timing sets, then the check set
  double working_set_bytes_ = 0;
  int next_set_ = 0;                     // the rotation continues from trial to trial
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(const CpuBackendOptions& options)
      : options_(options), pool_(options.threads), scratch_(static_cast<std::size_t>(pool_.size())) {}

  DeviceInfo device() const override {
    DeviceInfo info;
    info.backend = "cpu";
    info.name = host::cpu_model();
    info.multiprocessors = pool_.size();
    const host::CacheSize llc = host::last_level_cache();
    info.l2_bytes = llc.bytes;
    info.global_mem_bytes = host::memory_bytes();
    info.extra.emplace_back("simd", cpu::simd_level());
    info.extra.emplace_back("llc_source", llc.source);
    info.extra.emplace_back("hardware_threads", std::to_string(ThreadPool::hardware_threads()));
    return info;
  }

  VariantReport describe(const VariantParams& variant) const override {
    VariantReport report;
    // The CPU has no warps and no asynchronous copy pipeline.
    report.ignored_params = {"num_warps", "num_stages"};
    KernelResources split;
    split.kernel = "split_kv<bt" + std::to_string(variant.block_t) + ">";
    split.block_h = 32;
    split.threads_per_block = 1;
    // A task's working memory plays the part of shared memory: reported as
    // dynamic smem for the largest head group.
    split.dynamic_smem_bytes = static_cast<int>(cpu::Scratch::bytes(variant.block_t, 32));
    split.max_blocks_per_sm = 1;
    KernelResources combine;
    combine.kernel = "combine";
    combine.threads_per_block = 1;
    combine.max_blocks_per_sm = 1;
    report.kernels = {split, combine};
    return report;
  }

  LaunchReport plan_launch(const VariantParams& variant, const Point& point) const override {
    LaunchReport launch;
    launch.target_ctas = variant.target_ctas > 0 ? variant.target_ctas : 2 * pool_.size();
    if (variant.block_t < 1) {
      launch.feasible = false;
      launch.reason = "block_t must be >= 1";
      return launch;
    }
    launch.split = plan_split(point, variant.block_t, launch.target_ctas);
    launch.threads_per_block = 1;
    launch.smem_bytes = static_cast<int>(cpu::Scratch::bytes(variant.block_t, launch.split.block_h));
    launch.blocks_per_sm = 1;
    return launch;
  }

  std::unique_ptr<Workload> prepare(const Point& point, const WorkloadSpec& spec) override {
    try {
      return prepare_inputs(point, spec);
    } catch (const std::invalid_argument& e) {
      throw Error(std::string("prepare: ") + e.what());
    }
  }

  std::unique_ptr<CpuWorkload> prepare_inputs(const Point& point, const WorkloadSpec& spec) {
    if (point.batch < 1 || point.heads < 1 || point.topk < 1)
      throw Error("prepare: batch, heads and topk must be >= 1");
    auto w = std::make_unique<CpuWorkload>();
    w->point_ = point;
    const int context_rows = spec.context_rows > 0 ? spec.context_rows : std::max(4 * point.topk, 4096);
    if (context_rows < point.topk)
      throw Error("prepare: context_rows (" + std::to_string(context_rows) + ") must be >= topk (" +
                  std::to_string(point.topk) + ") for distinct indices");

    // Bytes one step reads: the rows it gathers, its q and its indices.
    // In double: B * topk alone reaches 2^32 within the plan schema's limits.
    const double batch = point.batch, heads = point.heads, topk = point.topk;
    const double q_bytes = batch * heads * kDimQK * 2.0, index_bytes = batch * topk * 4.0;
    const double read_per_set = batch * topk * kv_row_bytes(point.dtype) + q_bytes + index_bytes;
    int sets = spec.sets;
    if (sets <= 0) {
      const double llc = static_cast<double>(host::last_level_cache().bytes);
      sets = static_cast<int>(std::clamp(std::ceil(2 * llc / read_per_set), 2.0, static_cast<double>(kMaxSets)));
    }
    w->layout_ = CacheLayout{sets, point.batch, context_rows};
    const std::int64_t rows = w->layout_.total_rows();
    if (rows - 1 > std::numeric_limits<std::int32_t>::max())
      throw Error("prepare: " + std::to_string(rows) + " cache rows do not fit int32 indices; lower input_sets or context_rows");
    try {
      w->kv_ = std::make_unique<PoolMemory>(static_cast<std::size_t>(rows) * static_cast<std::size_t>(kv_row_bytes(point.dtype)));
      w->sets_.resize(static_cast<std::size_t>(sets) + 1);
    } catch (const std::bad_alloc&) {
      throw Error("prepare: cannot allocate the KV cache of " + std::to_string(rows) + " rows (" +
                  std::to_string(static_cast<double>(rows) * kv_row_bytes(point.dtype) / 1e9) + " GB)");
    }

    pool_.run(sets + 1, [&](std::int64_t set, int) {
      const bool check = set == sets;
      w->sets_[static_cast<std::size_t>(set)] =
          make_inputs(point, w->layout_, spec.seed, static_cast<int>(set), check ? spec.check_masked_fraction : 0.0,
                      spec.softmax_scale);
    });
    std::uint8_t* kv = w->kv_->data();
    const std::uint64_t seed = spec.seed;
    pool_.run(static_cast<std::int64_t>(sets + 1) * point.batch, [&](std::int64_t task, int) {
      const HostInputs& in = w->sets_[static_cast<std::size_t>(task / point.batch)];
      cpu::generate_kv_rows(seed, in.indices.data() + (task % point.batch) * point.topk, point.topk, point.dtype, kv);
    });

    std::int64_t gathered = 0;
    for (int s = 0; s < sets; ++s)
      for (std::int32_t i : w->sets_[static_cast<std::size_t>(s)].indices) gathered += i >= 0;
    w->working_set_bytes_ = static_cast<double>(gathered) * kv_row_bytes(point.dtype) + sets * (q_bytes + index_bytes) +
                            batch * heads * (kDimV * 2.0 + 4.0);
    return w;
  }

  CheckOutputs run_check(const VariantParams& variant, Workload& workload) override {
    CpuWorkload& w = as_cpu(workload);
    CheckOutputs out;
    const std::size_t rows = static_cast<std::size_t>(w.point_.batch) * w.point_.heads;
    // Poison: any element the step fails to write stays NaN and fails the check.
    out.o.assign(rows * kDimV, std::uint16_t{0x7FA5});
    out.lse.assign(rows, std::numeric_limits<float>::quiet_NaN());
    step(variant, w, w.sets_.back(), out.o.data(), out.lse.data());
    return out;
  }

  TrialTiming time_trial(const VariantParams& variant, Workload& workload, double min_trial_ms) override {
    CpuWorkload& w = as_cpu(workload);
    const std::size_t rows = static_cast<std::size_t>(w.point_.batch) * w.point_.heads;
    o_.resize(rows * kDimV);
    lse_.resize(rows);
    const int sets = w.layout_.sets;
    TrialTiming timing;
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto min_duration = std::chrono::duration<double, std::milli>(min_trial_ms);
    Clock::time_point now;
    do {
      step(variant, w, w.sets_[static_cast<std::size_t>(w.next_set_)], o_.data(), lse_.data());
      w.next_set_ = (w.next_set_ + 1) % sets;
      ++timing.steps;
      now = Clock::now();
    } while (now - start < min_duration);
    timing.elapsed_us = std::chrono::duration<double, std::micro>(now - start).count();
    return timing;
  }

 private:
  static CpuWorkload& as_cpu(Workload& workload) {
    auto* w = dynamic_cast<CpuWorkload*>(&workload);
    if (w == nullptr) throw Error("the CPU backend was handed a workload another backend prepared");
    return *w;
  }

  void step(const VariantParams& variant, CpuWorkload& w, const HostInputs& in, std::uint16_t* o, float* lse) {
    const LaunchReport launch = plan_launch(variant, w.point_);
    if (!launch.feasible) throw Error("step: " + launch.reason);
    const Point& p = w.point_;
    const std::size_t parts = static_cast<std::size_t>(p.batch) * p.heads * launch.split.nsplit;
    part_o_.resize(parts * kDimV);
    part_m_.resize(parts);
    part_l_.resize(parts);

    cpu::StepArgs args;
    args.kv = w.kv_->data();
    args.q = in.q.data();
    args.indices = in.indices.data();
    args.point = p;
    args.scale = in.softmax_scale;
    args.block_t = variant.block_t;
    args.split = launch.split;
    args.part_o = part_o_.data();
    args.part_m = part_m_.data();
    args.part_l = part_l_.data();
    args.o = o;
    args.lse = lse;
    args.drop_last_tile = options_.fault_drop_last_tile;

    pool_.run(launch.split.ctas, [&](std::int64_t task, int worker) {
      cpu::split_task(args, task, scratch_[static_cast<std::size_t>(worker)]);
    });
    pool_.run(cpu::combine_tasks(p), [&](std::int64_t task, int) { cpu::combine_task(args, task); });
  }

  CpuBackendOptions options_;
  ThreadPool pool_;
  std::vector<cpu::Scratch> scratch_;  // one per worker
  std::vector<float> part_o_, part_m_, part_l_;
  std::vector<std::uint16_t> o_;       // the timed steps' outputs
  std::vector<float> lse_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

std::unique_ptr<Backend> make_cpu_backend(int threads) {
  CpuBackendOptions options;
  options.threads = threads;
  return make_cpu_backend(options);
}

}  // namespace mla
