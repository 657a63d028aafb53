#include "analysis/significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "analysis/distributions.h"

namespace perfwatch::analysis {
namespace {

double mean_of(std::span<const double> x) {
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

// Sum of squared deviations from the mean.
double sum_sq_dev(std::span<const double> x, double mean) {
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return ss;
}

TTestResult finish(double difference, double std_error, double df) {
  TTestResult r;
  r.difference = difference;
  r.std_error = std_error;
  r.df = df;
  if (std_error > 0) {
    r.t = difference / std_error;
    r.p_value = student_t_two_sided_p(r.t, df);
  } else if (difference != 0) {
    r.t = difference > 0 ? std::numeric_limits<double>::infinity()
                         : -std::numeric_limits<double>::infinity();
    r.p_value = 0;
  }
  return r;
}

}  // namespace

double TTestResult::ci_halfwidth(double level) const {
  if (std_error == 0) return 0;
  return student_t_quantile(0.5 + level / 2, df) * std_error;
}

TTestResult welch_t_test(std::span<const double> a, std::span<const double> b) {
  const double na = a.size(), nb = b.size();
  const double ma = mean_of(a), mb = mean_of(b);
  const double va = sum_sq_dev(a, ma) / (na - 1) / na;  // variance of mean(a)
  const double vb = sum_sq_dev(b, mb) / (nb - 1) / nb;
  const double se2 = va + vb;
  double df = na + nb - 2;  // both variances zero: df is moot, keep it finite
  if (se2 > 0) df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
  return finish(mb - ma, std::sqrt(se2), df);
}

TTestResult one_sample_t_test(std::span<const double> x, double mu0, double prior_sd,
                              double prior_df) {
  const double n = x.size();
  const double m = mean_of(x);
  const double df = prior_df + n - 1;
  const double var = (prior_df * prior_sd * prior_sd + sum_sq_dev(x, m)) / df;
  return finish(m - mu0, std::sqrt(var / n), df);
}

TTestResult pooled_t_test(std::span<const double> a, std::span<const double> b,
                          double prior_sd, double prior_df) {
  const double na = a.size(), nb = b.size();
  const double ma = mean_of(a), mb = mean_of(b);
  const double local_df = na + nb - 2;
  const double local_ss = sum_sq_dev(a, ma) + sum_sq_dev(b, mb);
  const double df = prior_df + local_df;
  const double var = (prior_df * prior_sd * prior_sd + local_ss) / df;
  return finish(mb - ma, std::sqrt(var * (1 / na + 1 / nb)), df);
}

namespace {

// Number of arrangements giving each U = 0..m*n for sample sizes m and n
// without ties: the coefficients of the Gaussian binomial [m+n choose m]_q,
// built as prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i). Every intermediate is a
// Gaussian binomial with integer coefficients <= C(m+n, m), exact in doubles
// while that is below 2^53 (m + n <= 50 keeps it below 1.3e14).
std::vector<double> u_null_counts(int m, int n) {
  std::vector<double> c(static_cast<size_t>(m) * n + 1, 0.0);
  c[0] = 1;
  int degree = 0;
  for (int i = 1; i <= m; ++i) {
    const int up = n + i;
    degree += n;  // degree of [n+i choose i]_q is i*n
    for (int j = degree; j >= up; --j) c[j] -= c[j - up];
    for (int j = i; j <= degree; ++j) c[j] += c[j - i];
  }
  return c;
}

}  // namespace

MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  const int nx = static_cast<int>(x.size()), ny = static_cast<int>(y.size());
  const int n = nx + ny;
  // Mid-ranks of the pooled sample and the tie term sum(t^3 - t).
  std::vector<std::pair<double, int>> pooled;  // value, 0 = x, 1 = y
  pooled.reserve(n);
  for (double v : x) pooled.emplace_back(v, 0);
  for (double v : y) pooled.emplace_back(v, 1);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_x = 0, tie_term = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double mid_rank = (i + 1 + j) / 2.0;  // ranks i+1..j
    for (int k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_x += mid_rank;
    }
    const double t = j - i;
    tie_term += t * t * t - t;
    i = j;
  }
  MannWhitneyResult r;
  r.u = rank_sum_x - nx * (nx + 1) / 2.0;
  const double mn = static_cast<double>(nx) * ny;

  if (tie_term == 0 && n <= 50) {
    const std::vector<double> counts = u_null_counts(nx, ny);
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    const int u = static_cast<int>(std::lround(r.u));
    double lower = 0, upper = 0;  // P(U <= u), P(U >= u)
    for (int k = 0; k <= u; ++k) lower += counts[k];
    for (int k = u; k < static_cast<int>(counts.size()); ++k) upper += counts[k];
    r.p_value = std::min(1.0, 2 * std::min(lower, upper) / total);
    r.exact = true;
    return r;
  }
  const double mean_u = mn / 2;
  const double var_u = mn / 12 * ((n + 1) - tie_term / (static_cast<double>(n) * (n - 1)));
  if (var_u <= 0) return r;  // every value tied: no evidence either way
  const double excess = std::max(0.0, std::fabs(r.u - mean_u) - 0.5);
  r.z = std::copysign(excess / std::sqrt(var_u), r.u - mean_u);
  r.p_value = std::min(1.0, 2 * normal_cdf(-std::fabs(r.z)));
  return r;
}

}  // namespace perfwatch::analysis
