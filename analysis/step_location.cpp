#include "analysis/step_location.h"

#include <cmath>
#include <limits>

namespace perfwatch::analysis {

namespace {

// The commits that have runs, as log values, and prefix sums over them so
// that every split costs O(1).
class Stretch {
 public:
  explicit Stretch(std::span<const std::vector<double>> run_medians) {
    for (std::size_t k = 0; k < run_medians.size(); ++k) {
      if (run_medians[k].empty()) continue;
      original_.push_back(static_cast<int>(k));
      std::vector<double> logs;
      for (double v : run_medians[k]) logs.push_back(std::log(v));
      commits_.push_back(std::move(logs));
    }
    n_.assign(commits_.size() + 1, 0);
    sum_.assign(commits_.size() + 1, 0);
    sq_.assign(commits_.size() + 1, 0);
    for (std::size_t k = 0; k < commits_.size(); ++k) {
      double s = 0, q = 0;
      for (double x : commits_[k]) {
        s += x;
        q += x * x;
      }
      n_[k + 1] = n_[k] + static_cast<double>(commits_[k].size());
      sum_[k + 1] = sum_[k] + s;
      sq_[k + 1] = sq_[k] + q;
    }
  }

  int size() const { return static_cast<int>(commits_.size()); }
  int original(int k) const { return original_[static_cast<std::size_t>(k)]; }

  // Squared error of one level over commits [from, to).
  double level_sse(int from, int to) const {
    const double n = n_[to] - n_[from];
    if (n <= 0) return 0;
    const double s = sum_[to] - sum_[from];
    return std::max(0.0, (sq_[to] - sq_[from]) - s * s / n);
  }
  // Squared error of a step at `index` (two levels).
  double step_sse(int index) const { return level_sse(0, index) + level_sse(index, size()); }

  // Squared error of the best slide: a level, then a line from commit h on
  // to the newest (analysis/drift.h's hinge).
  double best_slide_sse() const {
    double best = std::numeric_limits<double>::infinity();
    const int n = size();
    const double runs = n_.back(), sy = sum_.back(), cyy = sq_.back() - sy * sy / runs;
    for (int h = 1; h < n; ++h) {
      // Least squares of y = c + b * g(k), g = k - h + 1 from h on, over
      // every run; per-commit sums make it O(n) a hinge.
      double sg = 0, sgg = 0, sgy = 0;
      for (int k = h; k < n; ++k) {
        const double g = k - h + 1, nk = n_[k + 1] - n_[k], yk = sum_[k + 1] - sum_[k];
        sg += g * nk;
        sgg += g * g * nk;
        sgy += g * yk;
      }
      const double cgg = sgg - sg * sg / runs, cgy = sgy - sg * sy / runs;
      best = std::min(best, std::max(0.0, cgg > 0 ? cyy - cgy * cgy / cgg : cyy));
    }
    return best;
  }

  std::vector<double> values(int from, int to) const {
    std::vector<double> out;
    for (int k = from; k < to; ++k) {
      for (double x : commits_[static_cast<std::size_t>(k)]) out.push_back(std::exp(x));
    }
    return out;
  }
  double runs() const { return n_.back(); }

 private:
  std::vector<std::vector<double>> commits_;
  std::vector<int> original_;
  std::vector<double> n_, sum_, sq_;
};

ComparePolicy at_alpha(ComparePolicy policy, double alpha) {
  policy.alpha = alpha;
  return policy;
}

}  // namespace

Comparison compare_split(std::span<const std::vector<double>> run_medians, int index, const NoiseBand& band,
                         Direction direction, const ComparePolicy& policy) {
  std::vector<double> before, after;
  for (int k = 0; k < static_cast<int>(run_medians.size()); ++k) {
    auto& side = k < index ? before : after;
    side.insert(side.end(), run_medians[static_cast<std::size_t>(k)].begin(),
                run_medians[static_cast<std::size_t>(k)].end());
  }
  return compare_runs(before, after, band, direction, policy);
}

std::optional<StepSplit> locate_step(std::span<const std::vector<double>> run_medians, const NoiseBand& band,
                                     Direction direction, const ComparePolicy& policy,
                                     const StepLocationPolicy& location) {
  const Stretch s(run_medians);
  const int first = std::max(1, location.min_before), last = s.size() - std::max(1, location.min_after);
  if (first > last) return std::nullopt;

  int best = first;
  for (int k = first + 1; k <= last; ++k) {
    if (s.step_sse(k) < s.step_sse(best)) best = k;
  }
  StepSplit out;
  out.index = s.original(best);
  out.candidates = last - first + 1;
  out.comparison = compare_runs(s.values(0, best), s.values(best, s.size()), band, direction,
                                at_alpha(policy, policy.alpha / out.candidates));

  // The band's run-to-run variance, or (uncalibrated, or runs that agree
  // exactly) the stretch's own about its two levels.
  double variance = band.sigma_log * band.sigma_log;
  if (!(variance > 0) && s.runs() > 2) variance = s.step_sse(best) / (s.runs() - 2);
  out.location_margin = std::numeric_limits<double>::infinity();
  for (int neighbour : {best - 1, best + 1}) {
    if (neighbour < 1 || neighbour >= s.size()) continue;
    const double gain = s.step_sse(neighbour) - s.step_sse(best);
    out.location_margin = std::min(out.location_margin, variance > 0 ? gain / (2 * variance) : 0.0);
  }
  out.slide_margin = variance > 0 ? (s.best_slide_sse() - s.step_sse(best)) / (2 * variance) : 0.0;
  return out;
}

}  // namespace perfwatch::analysis
