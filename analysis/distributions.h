// Probability distributions that perfwatch's tests need, written here so the
// statistics module depends on nothing but the C++ standard library.
//
// All functions are pure and thread-safe (no use of lgamma's global signgam).
// Accuracy: about 1e-12 relative for the CDFs over the ranges perfwatch uses
// (df >= 0.5, |t| < 1e6); quantiles are solved to 1e-12 in probability.
#pragma once

namespace perfwatch::analysis {

// log Gamma(x) for x > 0 (Lanczos approximation, g = 7, 9 terms).
// REQUIRES: x > 0.
double log_gamma(double x);

// Regularised incomplete beta I_x(a, b) = B(x; a, b) / B(a, b).
// REQUIRES: a > 0, b > 0, 0 <= x <= 1.
double incomplete_beta(double a, double b, double x);

// Standard normal CDF and its inverse. normal_quantile REQUIRES 0 < p < 1.
double normal_cdf(double z);
double normal_quantile(double p);

// Student's t with df degrees of freedom (real df allowed, as Welch's test
// produces). student_t_quantile REQUIRES 0 < p < 1 and df > 0; it returns
// t such that P(T <= t) = p.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Two-sided p-value of a t statistic: P(|T| >= |t|).
double student_t_two_sided_p(double t, double df);

// P(B <= k) for B ~ Binomial(n, p). k < 0 gives 0, k >= n gives 1.
// REQUIRES: n >= 0, 0 <= p <= 1.
double binomial_cdf(int k, int n, double p);

}  // namespace perfwatch::analysis
