#include "analysis/distributions.h"

#include <array>
#include <cmath>
#include <limits>

namespace perfwatch::analysis {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Continued fraction of I_x(a, b) (DLMF 8.17.22), evaluated with the modified
// Lentz method. Converges fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1.0;
  double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
  double h = d;
  for (int m = 1; m <= 20000; ++m) {
    const double even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
    d = 1.0 / guard(1.0 + even * d);
    c = guard(1.0 + even / c);
    h *= d * c;
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
    d = 1.0 / guard(1.0 + odd * d);
    c = guard(1.0 + odd / c);
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEps) break;
  }
  return h;
}

}  // namespace

double log_gamma(double x) {
  // Below 0.5 the recurrence Gamma(x) = Gamma(x + 1) / x keeps the Lanczos
  // series in its accurate range.
  if (x < 0.5) return log_gamma(x + 1.0) - std::log(x);
  static constexpr std::array<double, 9> kCoef = {
      0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
      771.32342877765313,   -176.61502916214059,   12.507343278686905,
      -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  constexpr double kG = 7.0;
  const double z = x - 1.0;
  double sum = kCoef[0];
  for (int i = 1; i < 9; ++i) sum += kCoef[i] / (z + i);
  const double t = z + kG + 0.5;
  return 0.5 * std::log(2.0 * kPi) + (z + 0.5) * std::log(t) - t + std::log(sum);
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  const double log_front = a * std::log(x) + b * std::log1p(-x) -
                           (log_gamma(a) + log_gamma(b) - log_gamma(a + b));
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  }
  return 1.0 - std::exp(log_front) * beta_continued_fraction(b, a, 1.0 - x) / b;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double normal_quantile(double p) {
  if (p == 0.5) return 0.0;
  if (p > 0.5) return -normal_quantile(1.0 - p);
  // p < 0.5. Start from Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4),
  // then Newton steps on the lower tail, which erfc gives to full relative
  // precision; three steps reach ~1e-15.
  const double w = std::sqrt(-2.0 * std::log(p));
  double z = -(w - (2.515517 + 0.802853 * w + 0.010328 * w * w) /
                       (1.0 + 1.432788 * w + 0.189269 * w * w + 0.001308 * w * w * w));
  for (int i = 0; i < 4; ++i) {
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * kPi);
    if (pdf <= 0) break;
    z -= (normal_cdf(z) - p) / pdf;
  }
  return z;
}

namespace {
// P(T > t) for t >= 0.
double student_t_upper_tail(double t, double df) {
  const double x = df / (df + t * t);
  return 0.5 * incomplete_beta(df / 2.0, 0.5, x);
}
}  // namespace

double student_t_cdf(double t, double df) {
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  const double upper = student_t_upper_tail(std::fabs(t), df);
  return t >= 0 ? 1.0 - upper : upper;
}

double student_t_two_sided_p(double t, double df) {
  if (std::isinf(t)) return 0.0;
  if (std::isnan(t)) return 1.0;
  return std::fmin(1.0, 2.0 * student_t_upper_tail(std::fabs(t), df));
}

double student_t_quantile(double p, double df) {
  if (p == 0.5) return 0.0;
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  const double tail = 1.0 - p;  // find t > 0 with P(T > t) = tail
  // Start from the Cornish-Fisher expansion in 1/df (Abramowitz & Stegun
  // 26.7.5), then Newton steps on the upper tail, kept inside a bracket
  // that shrinks with every step (bisection when Newton would leave it).
  const double z = normal_quantile(p);
  const double z2 = z * z;
  double t = z + z * (z2 + 1) / (4 * df) + z * ((5 * z2 + 16) * z2 + 3) / (96 * df * df) +
             z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * df * df * df);
  double lo = 0.0, hi = std::numeric_limits<double>::infinity();
  const double log_norm = log_gamma((df + 1) / 2) - log_gamma(df / 2) - 0.5 * std::log(df * kPi);
  if (!(t > 0) || !std::isfinite(t)) t = 1.0;
  for (int i = 0; i < 200; ++i) {
    const double upper = student_t_upper_tail(t, df);
    if (upper > tail) lo = t; else hi = t;
    const double pdf = std::exp(log_norm - (df + 1) / 2 * std::log1p(t * t / df));
    double next = pdf > 0 ? t + (upper - tail) / pdf : hi;
    if (!(next > lo && next < hi)) next = std::isinf(hi) ? 2 * t + 1 : 0.5 * (lo + hi);
    if (std::fabs(next - t) <= 1e-14 * t) return next;
    t = next;
  }
  return t;
}

double binomial_cdf(int k, int n, double p) {
  if (k < 0) return 0.0;
  if (k >= n) return 1.0;
  if (p <= 0.0) return 1.0;
  if (p >= 1.0) return 0.0;
  // P(B <= k) = I_{1-p}(n - k, k + 1).
  return incomplete_beta(n - k, k + 1.0, 1.0 - p);
}

}  // namespace perfwatch::analysis
