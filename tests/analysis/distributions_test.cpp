// Checked against closed forms and printed tables (Student t table to 4
// significant digits; binomial probabilities as exact fractions).
#include "analysis/distributions.h"

#include <cmath>

#include <gtest/gtest.h>

namespace perfwatch::analysis {
namespace {

constexpr double kPi = 3.14159265358979323846;

TEST(LogGamma, MatchesFactorialsAndHalfIntegers) {
  EXPECT_NEAR(log_gamma(1.0), 0.0, 1e-13);
  EXPECT_NEAR(log_gamma(5.0), std::log(24.0), 1e-13);
  EXPECT_NEAR(log_gamma(0.5), 0.5 * std::log(kPi), 1e-13);
  EXPECT_NEAR(log_gamma(101.0), 363.73937555556347, 1e-9);  // ln(100!)
  EXPECT_NEAR(log_gamma(0.1), std::log(9.513507698668732), 1e-12);
}

TEST(IncompleteBeta, ClosedForms) {
  for (double x : {0.01, 0.2, 0.5, 0.77, 0.99}) {
    EXPECT_NEAR(incomplete_beta(1, 1, x), x, 1e-13);
    EXPECT_NEAR(incomplete_beta(3, 1, x), std::pow(x, 3), 1e-13);
    EXPECT_NEAR(incomplete_beta(1, 4, x), 1 - std::pow(1 - x, 4), 1e-13);
  }
  EXPECT_NEAR(incomplete_beta(7.5, 7.5, 0.5), 0.5, 1e-13);
  EXPECT_NEAR(incomplete_beta(2000, 2000, 0.5), 0.5, 1e-11);
  EXPECT_EQ(incomplete_beta(2, 3, 0.0), 0.0);
  EXPECT_EQ(incomplete_beta(2, 3, 1.0), 1.0);
}

TEST(Normal, TableValues) {
  EXPECT_NEAR(normal_cdf(0.0), 0.5, 1e-15);
  EXPECT_NEAR(normal_cdf(1.96), 0.9750021, 1e-7);
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.995), 2.575829, 1e-6);
  EXPECT_NEAR(normal_quantile(0.05), -1.644854, 1e-6);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361341, 1e-6);
}

TEST(StudentT, ClosedFormsForOneAndTwoDegreesOfFreedom) {
  for (double t : {-30.0, -2.0, -0.3, 0.0, 0.7, 4.0, 100.0}) {
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / kPi, 1e-13) << t;
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-13) << t;
  }
}

// Upper-tail critical values from a printed t table (4 significant digits).
TEST(StudentT, QuantilesMatchTable) {
  struct Row { double p, df, t; };
  const Row rows[] = {
      {0.975, 1, 12.71}, {0.975, 2, 4.303}, {0.975, 3, 3.182}, {0.975, 4, 2.776},
      {0.975, 5, 2.571}, {0.975, 9, 2.262}, {0.975, 10, 2.228}, {0.975, 30, 2.042},
      {0.95, 20, 1.725}, {0.995, 10, 3.169}, {0.999, 5, 5.893}, {0.9995, 4, 8.610},
      {0.975, 120, 1.980}, {0.90, 7, 1.415},
  };
  for (const Row& r : rows) {
    const double t = student_t_quantile(r.p, r.df);
    EXPECT_NEAR(t, r.t, 0.0005 * r.t + 5e-4) << "p=" << r.p << " df=" << r.df;
    EXPECT_NEAR(student_t_cdf(t, r.df), r.p, 1e-11);
    EXPECT_NEAR(student_t_quantile(1 - r.p, r.df), -t, 1e-9 * t);
  }
  EXPECT_NEAR(student_t_quantile(0.975, 1e7), 1.959964, 1e-5);
}

TEST(StudentT, TwoSidedP) {
  EXPECT_NEAR(student_t_two_sided_p(2.228138852, 10), 0.05, 1e-8);
  EXPECT_NEAR(student_t_two_sided_p(-2.228138852, 10), 0.05, 1e-8);
  EXPECT_NEAR(student_t_two_sided_p(0, 3), 1.0, 1e-15);
}

TEST(Binomial, ExactFractions) {
  EXPECT_NEAR(binomial_cdf(1, 10, 0.5), 11.0 / 1024, 1e-14);
  EXPECT_NEAR(binomial_cdf(2, 10, 0.5), 56.0 / 1024, 1e-14);
  EXPECT_NEAR(binomial_cdf(0, 5, 0.5), 1.0 / 32, 1e-14);
  EXPECT_NEAR(binomial_cdf(2, 4, 0.3), 0.9163, 1e-12);  // 1 - 0.0756 - 0.0081
  EXPECT_EQ(binomial_cdf(-1, 4, 0.3), 0.0);
  EXPECT_EQ(binomial_cdf(4, 4, 0.3), 1.0);
}

}  // namespace
}  // namespace perfwatch::analysis
