#include "analysis/delta.h"

#include <cmath>

namespace perfwatch::analysis {

std::optional<double> delta_rel(std::optional<double> value, std::optional<double> reference) {
  if (!value || !reference || !std::isfinite(*value) || !std::isfinite(*reference) || !(*reference > 0))
    return std::nullopt;
  return *value / *reference - 1.0;
}

std::optional<double> delta_rel_of_ratio(std::optional<double> ratio) {
  if (!ratio || !std::isfinite(*ratio) || !(*ratio > 0)) return std::nullopt;
  return *ratio - 1.0;
}

}  // namespace perfwatch::analysis
