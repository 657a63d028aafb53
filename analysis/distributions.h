// Probability distributions that perfwatch's tests need: a narrow face over
// Boost.Math (header-only), so the rest of analysis/ names no Boost type.
//
// All functions are pure and thread-safe (no use of lgamma's global signgam),
// accurate to a few ulps (Boost.Math's own error figures), and throw nothing:
// an argument outside a REQUIRES gives NaN, an overflow +-infinity.
#pragma once

namespace perfwatch::analysis {

// log Gamma(x) for x > 0.
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
