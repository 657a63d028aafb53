#include "analysis/change_points.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "analysis/random.h"

namespace perfwatch::analysis {
namespace {

// Counts and sums of values by rank, for sum_i |x - x_i| over a set in O(log L).
class RankTree {
 public:
  // Empty, for ranks 0 .. size - 1. Reuses its storage.
  void clear(int size) {
    count_.assign(size + 1, 0);
    sum_.assign(size + 1, 0.0);
    total_count_ = 0;
    total_sum_ = 0;
  }
  // Holds exactly the given values (rank[i] is values[i]'s rank), in O(L).
  void fill(std::span<const double> values, std::span<const int> rank) {
    clear(static_cast<int>(values.size()));
    for (size_t i = 0; i < values.size(); ++i) {
      count_[rank[i] + 1] += 1;
      sum_[rank[i] + 1] += values[i];
      total_count_ += 1;
      total_sum_ += values[i];
    }
    const int n = static_cast<int>(count_.size());
    for (int i = 1; i < n; ++i) {  // prefix blocks, bottom up
      const int parent = i + (i & -i);
      if (parent < n) {
        count_[parent] += count_[i];
        sum_[parent] += sum_[i];
      }
    }
  }
  void add(int rank, double value, int sign) {
    total_count_ += sign;
    total_sum_ += sign * value;
    for (int i = rank + 1; i < static_cast<int>(count_.size()); i += i & -i) {
      count_[i] += sign;
      sum_[i] += sign * value;
    }
  }
  // sum over members of |value - member|; `rank` is value's rank.
  double distance_sum(int rank, double value) const {
    int c = 0;
    double s = 0;
    for (int i = rank + 1; i > 0; i -= i & -i) {
      c += count_[i];
      s += sum_[i];
    }
    return (value * c - s) + ((total_sum_ - s) - value * (total_count_ - c));
  }

 private:
  std::vector<int> count_;
  std::vector<double> sum_;
  int total_count_ = 0;
  double total_sum_ = 0;
};

struct Split {
  int tau = -1;  // size of the left part, or -1 when no split is allowed
  double q = 0;
};

// A segment [begin, end) of the series with what permutations inside it do
// not change: the ranks of its values among themselves, and the sum of
// |v_i - v_k| over its pairs.
struct Segment {
  int begin, end;
  double pair_sum = 0;
};

// Best split of one segment: values in their order, with their ranks.
Split best_split(std::span<const double> v, std::span<const int> rank, double pair_sum,
                 int min_segment, RankTree& left, RankTree& right) {
  const int len = static_cast<int>(v.size());
  Split best;
  if (len < 2 * min_segment) return best;
  left.clear(len);
  right.fill(v, rank);
  double within_left = 0, within_right = pair_sum;
  for (int tau = 1; tau <= len - min_segment; ++tau) {
    const double x = v[tau - 1];
    const int r = rank[tau - 1];
    right.add(r, x, -1);
    within_right -= right.distance_sum(r, x);
    within_left += left.distance_sum(r, x);
    left.add(r, x, +1);
    const int m = tau, n = len - tau;
    if (m < min_segment) continue;
    const double between = pair_sum - within_left - within_right;
    const double e = 2 * between / (double(m) * n) - 2 * within_left / (double(m) * (m - 1)) -
                     2 * within_right / (double(n) * (n - 1));
    const double q = double(m) * n / (m + n) * e;
    if (best.tau < 0 || q > best.q) best = {tau, q};
  }
  return best;
}

// Sets the ranks of values[begin, end) among themselves and returns the
// segment with its pair sum.
Segment make_segment(std::span<const double> values, std::vector<int>& rank, int begin, int end) {
  std::vector<int> order(end - begin);
  std::iota(order.begin(), order.end(), begin);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return values[a] < values[b]; });
  Segment seg{begin, end, 0};
  const int len = end - begin;
  for (int k = 0; k < len; ++k) {
    rank[order[k]] = k;
    seg.pair_sum += values[order[k]] * (2.0 * k - len + 1);
  }
  return seg;
}

// Largest Q over all segments; returns (segment index, split).
std::pair<int, Split> best_over(std::span<const double> values, std::span<const int> rank,
                                const std::vector<Segment>& segs, int min_segment) {
  thread_local RankTree left, right;  // scratch storage only; no state between calls
  std::pair<int, Split> best{-1, {}};
  for (int s = 0; s < static_cast<int>(segs.size()); ++s) {
    const int b = segs[s].begin, len = segs[s].end - segs[s].begin;
    const Split split =
        best_split(values.subspan(b, len), rank.subspan(b, len), segs[s].pair_sum, min_segment,
                   left, right);
    if (split.tau >= 0 && (best.first < 0 || split.q > best.second.q)) best = {s, split};
  }
  return best;
}

}  // namespace

std::vector<ChangePoint> find_change_points(std::span<const double> values,
                                            const ChangePointOptions& options) {
  const int min_segment = std::max(2, options.min_segment);
  const int total = static_cast<int>(values.size());
  std::vector<int> rank(total);
  std::vector<Segment> segs = {make_segment(values, rank, 0, total)};
  std::vector<ChangePoint> found;
  SeededRng rng(options.seed);
  std::vector<double> shuffled(total);
  std::vector<int> shuffled_rank(total);
  // A candidate needs 1 + exceedances <= max_p * (1 + permutations).
  const double allowed = options.max_p * (1 + options.permutations) - 1;

  while (options.max_change_points <= 0 ||
         static_cast<int>(found.size()) < options.max_change_points) {
    const auto [seg, split] = best_over(values, rank, segs, min_segment);
    if (seg < 0 || allowed < 0) break;
    int exceed = 0;
    for (int done = 0; done < options.permutations && exceed <= allowed; ++done) {
      std::copy(values.begin(), values.end(), shuffled.begin());
      std::copy(rank.begin(), rank.end(), shuffled_rank.begin());
      for (const Segment& s : segs) {  // Fisher-Yates inside each segment
        for (int i = s.end - 1; i > s.begin; --i) {
          const int j = s.begin + static_cast<int>(rng.below(i - s.begin + 1));
          std::swap(shuffled[i], shuffled[j]);
          std::swap(shuffled_rank[i], shuffled_rank[j]);
        }
      }
      if (best_over(shuffled, shuffled_rank, segs, min_segment).second.q >= split.q) ++exceed;
    }
    if (exceed > allowed) break;
    ChangePoint cp;
    cp.index = segs[seg].begin + split.tau;
    cp.p_value = (1.0 + exceed) / (1.0 + options.permutations);
    cp.statistic = split.q;
    found.push_back(cp);
    const Segment old = segs[seg];
    segs[seg] = make_segment(values, rank, old.begin, cp.index);
    segs.insert(segs.begin() + seg + 1, make_segment(values, rank, cp.index, old.end));
  }

  std::sort(found.begin(), found.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  // Magnitudes from the final segmentation: the segments either side.
  auto mean = [&](int b, int e) {
    return std::accumulate(values.begin() + b, values.begin() + e, 0.0) / (e - b);
  };
  for (size_t i = 0; i < found.size(); ++i) {
    const int prev = i == 0 ? 0 : found[i - 1].index;
    const int next = i + 1 == found.size() ? total : found[i + 1].index;
    found[i].mean_before = mean(prev, found[i].index);
    found[i].mean_after = mean(found[i].index, next);
  }
  return found;
}

std::vector<ChangePoint> keep_persistent(std::span<const double> values,
                                         std::span<const ChangePoint> candidates,
                                         const ChangePointOptions& options) {
  if (values.size() < 2 || candidates.empty()) return {};
  const std::vector<ChangePoint> before =
      find_change_points(values.first(values.size() - 1), options);
  std::vector<ChangePoint> kept;
  for (const ChangePoint& cp : candidates) {
    for (const ChangePoint& old : before) {
      if (old.index >= cp.index - 1 && old.index <= cp.index + 1) {
        kept.push_back(cp);
        break;
      }
    }
  }
  return kept;
}

std::vector<ChangePoint> persistent_change_points(std::span<const double> values,
                                                  const ChangePointOptions& options) {
  return keep_persistent(values, find_change_points(values, options), options);
}

}  // namespace perfwatch::analysis
