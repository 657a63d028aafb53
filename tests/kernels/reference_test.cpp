#include "mla/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace mla {
namespace {

constexpr std::uint64_t kSeed = 99;

// One batch element, one head, topk 2, rows chosen by hand.
HostInputs tiny(std::int32_t first, std::int32_t second, int heads = 1) {
  HostInputs in;
  in.point.batch = 1;
  in.point.heads = heads;
  in.point.topk = 2;
  in.seed = kSeed;
  in.softmax_scale = 0.0625f;
  for (int i = 0; i < heads * kDimQK; ++i) in.q.push_back(q_element(kSeed, 0, i));
  in.indices = {first, second};
  return in;
}

long double row(std::int64_t r, int d) { return bf16_bits_to_float(kv_element(kSeed, r, d)); }

long double score(const HostInputs& in, std::int64_t r, int h = 0) {
  long double s = 0;
  for (int d = 0; d < kDimQK; ++d) s += static_cast<long double>(bf16_bits_to_float(in.q[h * kDimQK + d])) * row(r, d);
  return s * in.softmax_scale;
}

TEST(Reference, OneValidTokenGivesItsValueAndScore) {
  const HostInputs in = tiny(-1, 17);
  const ReferenceOutputs ref = compute_reference(in, 2);
  for (int d = 0; d < kDimV; ++d) EXPECT_DOUBLE_EQ(ref.o[d], static_cast<double>(row(17, d))) << d;
  EXPECT_NEAR(ref.lse[0], static_cast<double>(score(in, 17)), 1e-12);
}

TEST(Reference, TheSameTokenTwiceAddsLogTwo) {
  const HostInputs in = tiny(5, 5);
  const ReferenceOutputs ref = compute_reference(in, 1);
  for (int d = 0; d < kDimV; ++d) EXPECT_NEAR(ref.o[d], static_cast<double>(row(5, d)), 1e-14) << d;
  EXPECT_NEAR(ref.lse[0], static_cast<double>(score(in, 5) + std::log(2.0L)), 1e-12);
}

TEST(Reference, TwoTokensMatchTheClosedForm) {
  const HostInputs in = tiny(3, 40, 2);
  const ReferenceOutputs ref = compute_reference(in, 2);
  for (int h = 0; h < 2; ++h) {
    const long double s0 = score(in, 3, h), s1 = score(in, 40, h);
    const long double e0 = std::exp(s0), e1 = std::exp(s1);
    EXPECT_NEAR(ref.lse[h], static_cast<double>(std::log(e0 + e1)), 1e-12);
    for (int d = 0; d < kDimV; ++d)
      EXPECT_NEAR(ref.o[h * kDimV + d], static_cast<double>((e0 * row(3, d) + e1 * row(40, d)) / (e0 + e1)), 1e-12);
  }
}

TEST(Reference, AllMaskedGivesZeroAndMinusInfinity) {
  const HostInputs in = tiny(-1, -1);
  const ReferenceOutputs ref = compute_reference(in, 1);
  for (double x : ref.o) EXPECT_EQ(x, 0.0);
  EXPECT_TRUE(std::isinf(ref.lse[0]) && ref.lse[0] < 0);
}

// The reference rounded as a backend would write it.
CheckOutputs rounded(const ReferenceOutputs& ref) {
  CheckOutputs out;
  for (double x : ref.o) out.o.push_back(float_to_bf16_bits(static_cast<float>(x)));
  for (double x : ref.lse) out.lse.push_back(static_cast<float>(x));
  return out;
}

ReferenceOutputs two_rows_one_masked() {
  HostInputs in = tiny(3, 40, 1);
  in.point.batch = 2;
  for (int i = 0; i < kDimQK; ++i) in.q.push_back(q_element(kSeed, 0, kDimQK + i));
  in.indices = {3, 40, -1, -1};
  return compute_reference(in, 2);
}

TEST(Compare, PassesTheRoundedReference) {
  const ReferenceOutputs ref = two_rows_one_masked();
  const Comparison c = compare(ref, rounded(ref), Tolerance{});
  EXPECT_TRUE(c.passed) << c.reason;
  EXPECT_GT(c.rel_l2_o, 0.0);  // bf16 rounding shows
  EXPECT_LT(c.rel_l2_o, 0.005);
  EXPECT_LT(c.max_abs_lse, 1e-5);
  EXPECT_EQ(c.nonfinite, 0);
  EXPECT_EQ(c.masked_rows_wrong, 0);
}

TEST(Compare, PoisonLeftInPlaceFails) {
  const ReferenceOutputs ref = two_rows_one_masked();
  CheckOutputs out = rounded(ref);
  out.o[100] = 0x7FA5;  // one element never written
  Comparison c = compare(ref, out, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.nonfinite, 1);
  EXPECT_TRUE(std::isnan(c.rel_l2_o));

  out = rounded(ref);
  out.lse[0] = std::numeric_limits<float>::quiet_NaN();
  c = compare(ref, out, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(std::isnan(c.max_abs_lse));
}

TEST(Compare, WrongValuesFailTheTolerance) {
  const ReferenceOutputs ref = two_rows_one_masked();
  CheckOutputs out = rounded(ref);
  for (int d = 0; d < kDimV; ++d) out.o[d] = float_to_bf16_bits(bf16_bits_to_float(out.o[d]) * 1.1f);
  Comparison c = compare(ref, out, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_NEAR(c.rel_l2_o, 0.1, 0.01);
  EXPECT_NE(c.reason.find("rel_l2_o"), std::string::npos) << c.reason;

  out = rounded(ref);
  out.lse[0] += 0.01f;
  c = compare(ref, out, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_NEAR(c.max_abs_lse, 0.01, 1e-4);
}

TEST(Compare, AFullyMaskedRowMustBeZeroWithMinusInfinity) {
  const ReferenceOutputs ref = two_rows_one_masked();
  CheckOutputs out = rounded(ref);
  out.lse[1] = 0.0f;  // finite where the row has no token
  Comparison c = compare(ref, out, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.masked_rows_wrong, 1);

  out = rounded(ref);
  out.o[kDimV + 7] = float_to_bf16_bits(1e-3f);
  c = compare(ref, out, Tolerance{});
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.masked_rows_wrong, 1);
}

}  // namespace
}  // namespace mla
