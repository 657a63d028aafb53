// Where a slow drift started. A drift is a slide of small steps, each within
// the noise of its own comparison, that together left the band; once it is
// found (judge/drift.h), people ask where it began. The model: the values
// hold a level, then slide linearly ("hinge"): y_j = c for j < h and
// y_j = c + s * (j - h + 1) for j >= h; the start is the h with the least
// squared error. On log values a multiplicative slide is linear too. A
// single step fits as a steep hinge within a commit of the step, so the
// answer is near right also when the "drift" was one step that its own
// comparison missed.
#pragma once

#include <span>

namespace perfwatch::analysis {

// The index of the first value that moved (1 .. size - 1); 1 when there are
// fewer than 3 values (nothing to fit).
int slide_start(std::span<const double> values);

}  // namespace perfwatch::analysis
