#include "analysis/judge.h"

#include <cmath>

#include "analysis/distributions.h"

namespace perfwatch::analysis::detail {

Judgement judge(const LogChange& change, double band_log, double margin_log, double alpha,
                double equivalence_level) {
  const double size = std::fabs(change.estimate);
  if (change.p_value < alpha && size > band_log) {
    return change.estimate > 0 ? Judgement::kUp : Judgement::kDown;
  }
  if (change.df > 0) {
    const double q = student_t_quantile(0.5 + equivalence_level / 2, change.df);
    if (size + q * change.std_error <= margin_log) return Judgement::kWithin;
  }
  return Judgement::kUndecided;
}

}  // namespace perfwatch::analysis::detail
