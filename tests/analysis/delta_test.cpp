#include "analysis/delta.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace perfwatch::analysis {
namespace {

TEST(Delta, IsValueOverReferenceMinusOne) {
  EXPECT_NEAR(*delta_rel(112.0, 100.0), 0.12, 1e-15);
  EXPECT_NEAR(*delta_rel(90.0, 100.0), -0.10, 1e-15);
  EXPECT_DOUBLE_EQ(*delta_rel(100.0, 100.0), 0.0);
  EXPECT_DOUBLE_EQ(*delta_rel_of_ratio(1.25), 0.25);
}

TEST(Delta, NoNumberWithoutAMeasurementToCompareAgainst) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(delta_rel(std::nullopt, 100.0));
  EXPECT_FALSE(delta_rel(100.0, std::nullopt));
  EXPECT_FALSE(delta_rel(100.0, 0.0));
  EXPECT_FALSE(delta_rel(100.0, -5.0));
  EXPECT_FALSE(delta_rel(nan, 100.0));
  EXPECT_FALSE(delta_rel(100.0, inf));
  EXPECT_FALSE(delta_rel_of_ratio(std::nullopt));
  EXPECT_FALSE(delta_rel_of_ratio(0.0));
  EXPECT_FALSE(delta_rel_of_ratio(nan));
}

}  // namespace
}  // namespace perfwatch::analysis
