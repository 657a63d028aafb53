// The change of a value against a reference, the one way every table and
// document says it: value / reference - 1, in the metric's own direction
// (+0.12 = the metric is 12% larger; whether that is better depends on the
// metric). Used for a variant against the run's baseline variant, a
// candidate against the baseline in an A/B table, and a ratio b/a of two
// commits or runs.
#pragma once

#include <optional>

namespace perfwatch::analysis {

// value / reference - 1; nullopt when either is absent or not finite, or the
// reference is not positive (a time or a rate is never <= 0: such a value is
// no measurement to compare against).
std::optional<double> delta_rel(std::optional<double> value, std::optional<double> reference);

// ratio - 1 for a ratio already formed (value / reference); nullopt when it
// is absent, not finite or not positive.
std::optional<double> delta_rel_of_ratio(std::optional<double> ratio);

}  // namespace perfwatch::analysis
