// The CPU backend's split-KV algorithm against the float64 reference, over
// the shapes a decode kernel gets wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "mla/backend.h"
#include "mla/cpu_backend.h"
#include "mla/reference.h"

namespace mla {
namespace {

struct Case {
  std::string name;
  int batch, heads, topk;
  int block_t;
  int target_ctas;
  double masked_fraction;
  int expected_nsplit = 0;  // 0 = do not check
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CpuBackendVsReference : public ::testing::TestWithParam<Case> {};

TEST_P(CpuBackendVsReference, MatchesTheReference) {
  const Case& c = GetParam();
  auto backend = make_cpu_backend(2);
  Point point;
  point.batch = c.batch;
  point.heads = c.heads;
  point.topk = c.topk;
  VariantParams variant;
  variant.block_t = c.block_t;
  variant.target_ctas = c.target_ctas;

  const LaunchReport launch = backend->plan_launch(variant, point);
  ASSERT_TRUE(launch.feasible) << launch.reason;
  if (c.expected_nsplit > 0) {
    EXPECT_EQ(launch.split.nsplit, c.expected_nsplit);
  }

  WorkloadSpec spec;
  spec.seed = 1234;
  spec.sets = 1;
  spec.check_masked_fraction = c.masked_fraction;
  auto workload = backend->prepare(point, spec);
  const ReferenceOutputs ref = compute_reference(workload->check_inputs(), 2);
  const CheckOutputs out = backend->run_check(variant, *workload);
  const Comparison cmp = compare(ref, out, Tolerance{});
  EXPECT_TRUE(cmp.passed) << cmp.reason;
  // bf16 rounding of o alone costs about 0.0017; the float accumulation adds little.
  EXPECT_LT(cmp.rel_l2_o, 0.003);
  EXPECT_LT(cmp.max_abs_lse, 1e-4);
  EXPECT_EQ(cmp.nonfinite, 0);

  // Fully masked rows came out as o = 0, lse = -inf, and only there.
  const HostInputs& in = workload->check_inputs();
  for (int b = 0; b < c.batch; ++b) {
    bool any = false;
    for (int j = 0; j < c.topk; ++j) any = any || in.indices[static_cast<std::size_t>(b) * c.topk + j] >= 0;
    for (int h = 0; h < c.heads; ++h) {
      const float lse = out.lse[static_cast<std::size_t>(b) * c.heads + h];
      EXPECT_EQ(std::isinf(lse) && lse < 0, !any) << "b " << b << " h " << h;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CpuBackendVsReference,
    ::testing::Values(
        // name, B, H, topk, block_t, target_ctas, masked, nsplit
        Case{"users_b1_default_split", 1, 16, 2048, 32, 0, 0.1, 4},
        Case{"b1_one_split", 1, 16, 700, 32, 1, 0.1, 1},
        Case{"b1_split_per_tile", 1, 16, 700, 32, 1 << 20, 0.1, 22},
        Case{"topk_not_multiple_of_tile", 5, 16, 1000, 64, 0, 0.2},
        Case{"partial_tiles_bt16", 4, 16, 333, 16, 40, 0.1, 10},
        Case{"few_heads", 3, 3, 257, 32, 9, 0.1, 3},
        Case{"one_head_one_token", 1, 1, 1, 32, 4, 0.0, 1},
        Case{"block_t_1", 2, 4, 37, 1, 64, 0.1, 32},
        Case{"tile_bigger_than_topk", 3, 16, 50, 128, 8, 0.1, 1},
        Case{"h128_four_head_groups", 2, 128, 200, 32, 64, 0.1, 7},
        Case{"h40_partial_head_group", 3, 40, 150, 32, 0, 0.1},
        Case{"fully_masked_rows_and_empty_splits", 6, 8, 64, 4, 1 << 20, 0.9, 16},
        Case{"batch_with_masked_rows", 8, 16, 512, 64, 0, 0.3}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(CpuBackend, DescribesItselfAndResolvesTargetCtas) {
  auto backend = make_cpu_backend(3);
  const DeviceInfo device = backend->device();
  EXPECT_EQ(device.backend, "cpu");
  EXPECT_EQ(device.multiprocessors, 3);
  EXPECT_GT(device.l2_bytes, 0);

  VariantParams variant;
  variant.block_t = 64;
  const VariantReport report = backend->describe(variant);
  EXPECT_TRUE(report.feasible);
  EXPECT_EQ(report.ignored_params, (std::vector<std::string>{"num_warps", "num_stages"}));
  ASSERT_FALSE(report.kernels.empty());

  Point point;
  point.batch = 1;
  point.heads = 16;
  point.topk = 2048;
  const LaunchReport launch = backend->plan_launch(variant, point);
  EXPECT_EQ(launch.target_ctas, 6);  // two per worker thread
  EXPECT_EQ(launch.split.nsplit, 6);
  point.dtype = KvDtype::kFp8E4m3;
  EXPECT_TRUE(backend->plan_launch(variant, point).feasible);
}

// The fp8 cache (FlashMLA's 656-byte rows) against the reference on the
// dequantised cache, at the same tolerances as bf16; and it really reads fp8:
// its output differs from the bf16 cache's by about the e4m3 rounding.
TEST(CpuBackend, Fp8CachePassesTheCheckAndDiffersFromBf16) {
  auto backend = make_cpu_backend(2);
  Point point;
  point.batch = 5;
  point.heads = 20;
  point.topk = 333;
  point.dtype = KvDtype::kFp8E4m3;
  WorkloadSpec spec;
  spec.sets = 1;
  spec.seed = 77;
  for (int block_t : {16, 64}) {
    for (int target_ctas : {1, 0, 1000}) {
      VariantParams variant;
      variant.block_t = block_t;
      variant.target_ctas = target_ctas;
      auto workload = backend->prepare(point, spec);
      const ReferenceOutputs ref = compute_reference(workload->check_inputs(), 2);
      const Comparison cmp = compare(ref, backend->run_check(variant, *workload), Tolerance{});
      EXPECT_TRUE(cmp.passed) << block_t << "/" << target_ctas << ": " << cmp.reason;
      EXPECT_LT(cmp.rel_l2_o, 2e-3);
      EXPECT_LT(cmp.max_abs_lse, 1e-4);
    }
  }
  auto fp8 = backend->prepare(point, spec);
  Point bf16_point = point;
  bf16_point.dtype = KvDtype::kBf16;
  auto bf16 = backend->prepare(bf16_point, spec);
  const ReferenceOutputs ref_fp8 = compute_reference(fp8->check_inputs(), 2);
  const ReferenceOutputs ref_bf16 = compute_reference(bf16->check_inputs(), 2);
  // The same indices and q; the rows differ by e4m3's 3 mantissa bits.
  EXPECT_EQ(fp8->check_inputs().indices, bf16->check_inputs().indices);
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref_fp8.o.size(); ++i) {
    diff2 += (ref_fp8.o[i] - ref_bf16.o[i]) * (ref_fp8.o[i] - ref_bf16.o[i]);
    ref2 += ref_bf16.o[i] * ref_bf16.o[i];
  }
  const double rel = std::sqrt(diff2 / ref2);
  EXPECT_GT(rel, 5e-3);
  EXPECT_LT(rel, 0.1);
  // So a backend that read the bf16 values would fail the fp8 check.
  EXPECT_FALSE(compare(ref_fp8, backend->run_check(VariantParams{}, *bf16), Tolerance{}).passed);
}

TEST(CpuBackend, WorkingSetCoversTwiceTheLastLevelCache) {
  auto backend = make_cpu_backend(2);
  Point point;
  point.batch = 2;
  point.heads = 4;
  point.topk = 256;
  auto workload = backend->prepare(point, WorkloadSpec{});
  EXPECT_GE(workload->working_set_bytes(), 2.0 * static_cast<double>(backend->device().l2_bytes));
  EXPECT_GE(workload->layout().sets, 2);
  EXPECT_EQ(workload->layout().context_rows, 4096);

  VariantParams variant;
  const TrialTiming t = backend->time_trial(variant, *workload, 5.0);
  EXPECT_GE(t.steps, 1);
  EXPECT_GE(t.elapsed_us, 5000.0);
  EXPECT_GT(t.time_us(), 0.0);
  EXPECT_FALSE(t.sm_clock_mhz.has_value());
}

TEST(CpuBackend, ChecksAreRepeatableAndTimingLeavesThemAlone) {
  auto backend = make_cpu_backend(2);
  Point point;
  point.batch = 4;
  point.heads = 16;
  point.topk = 300;
  WorkloadSpec spec;
  spec.sets = 2;
  auto workload = backend->prepare(point, spec);
  VariantParams variant;
  const CheckOutputs first = backend->run_check(variant, *workload);
  backend->time_trial(variant, *workload, 1.0);
  const CheckOutputs second = backend->run_check(variant, *workload);
  EXPECT_EQ(first.o, second.o);
}

TEST(CpuBackend, TheDropLastTileFaultIsCaughtByTheCheck) {
  CpuBackendOptions options;
  options.threads = 2;
  options.fault_drop_last_tile = true;
  auto backend = make_cpu_backend(options);
  Point point;
  point.batch = 4;
  point.heads = 16;
  point.topk = 256;
  WorkloadSpec spec;
  spec.sets = 1;
  auto workload = backend->prepare(point, spec);
  const ReferenceOutputs ref = compute_reference(workload->check_inputs(), 2);
  const Comparison cmp = compare(ref, backend->run_check(VariantParams{}, *workload), Tolerance{});
  EXPECT_FALSE(cmp.passed);
}

TEST(CpuBackend, RefusesAContextSmallerThanTopk) {
  auto backend = make_cpu_backend(1);
  Point point;
  point.topk = 100;
  WorkloadSpec spec;
  spec.context_rows = 50;
  EXPECT_THROW(backend->prepare(point, spec), Error);
}

}  // namespace
}  // namespace mla
