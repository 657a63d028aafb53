// Internal to perfwatch_analysis: the decision rule shared by commit
// comparisons (compare.h) and paired variant A/B (experiment.h). Other parts
// use those headers instead.
#pragma once

namespace perfwatch::analysis::detail {

// Evidence about a change on the log scale: estimate, its standard error and
// the t degrees of freedom behind that error.
struct LogChange {
  double estimate = 0;
  double std_error = 0;
  double df = 0;
  double p_value = 1;  // two-sided, of estimate == 0
};

enum class Judgement { kUp, kDown, kWithin, kUndecided };

// kUp / kDown: p_value < alpha AND |estimate| > band_log (the band of this
//   comparison's design): significant and outside the noise band.
// kWithin: the equivalence_level CI of the change lies inside +-margin_log
//   (two one-sided tests at (1 - equivalence_level) / 2 each): the evidence
//   says the change is smaller than the margin.
// kUndecided: neither.
Judgement judge(const LogChange& change, double band_log, double margin_log, double alpha,
                double equivalence_level);

}  // namespace perfwatch::analysis::detail
