#include "analysis/drift.h"

#include <cstddef>
#include <limits>

namespace perfwatch::analysis {

int slide_start(std::span<const double> y) {
  const std::size_t n = y.size();
  if (n < 3) return 1;
  int best = 1;
  double best_sse = std::numeric_limits<double>::infinity();
  for (std::size_t h = 1; h < n; ++h) {
    // Least squares of y on x_j = max(0, j - h + 1), with an intercept.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double x = j >= h ? static_cast<double>(j - h + 1) : 0.0;
      sx += x;
      sy += y[j];
      sxx += x * x;
      sxy += x * y[j];
    }
    const double nn = static_cast<double>(n);
    const double var_x = sxx - sx * sx / nn;
    const double slope = var_x > 0 ? (sxy - sx * sy / nn) / var_x : 0.0;
    const double level = (sy - slope * sx) / nn;
    double sse = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double x = j >= h ? static_cast<double>(j - h + 1) : 0.0;
      const double r = y[j] - level - slope * x;
      sse += r * r;
    }
    // Ties go to the later start: the slide began no earlier than the data say.
    if (sse <= best_sse * (1 + 1e-12)) {
      best_sse = sse;
      best = static_cast<int>(h);
    }
  }
  return best;
}

}  // namespace perfwatch::analysis
