// Change-point detection over one variant x point's history (one value per
// benchmarked commit, oldest first): E-Divisive with energy distances
// (Matteson & James 2014, JASA), as MongoDB (Daly et al., ICPE 2020) and
// Hunter (Fleming et al., ICPE 2023) use it for performance histories.
//
// Method. For a segment split at tau into X (left, m values) and Y (right,
// n values), with alpha = 1:
//   E = 2/(m n) sum|X_i - Y_j| - 2/(m(m-1)) sum_{i<k}|X_i - X_k| - 2/(n(n-1)) sum_{j<k}|Y_j - Y_k|
//   Q = m n / (m + n) * E
// The candidate is the split with the largest Q over all current segments
// (the segment's end is kept fixed, as MongoDB does, rather than also
// searching the right end). Its significance is a permutation test: the
// values inside each current segment are shuffled (seeded), the largest Q is
// recomputed, and p = (1 + #{Q_perm >= Q}) / (1 + permutations). A candidate
// with p <= max_p becomes a change point and splits its segment; the search
// repeats until a candidate is not significant. The test stops early once p
// can no longer reach max_p, so quiet histories are cheap.
//
// A one-commit blip is not a step: every segment, in particular the one a
// change point opens, must hold at least min_segment values (default 3), so
// an isolated outlier cannot be cut out as a segment of its own, and a split
// next to it does not move the energy statistic beyond what permutations of
// the same values produce. The price: a step in the last min_segment - 1
// commits (or the first) is not seen here yet; the commit comparison sees it.
//
// Cost: one scan of a segment of L values is O(L log L) (rank-indexed
// Fenwick trees keep the within- and between-group distance sums while the
// split moves), so a history of T values with c change points and P
// permutations costs O(c P T log T): about 10^7 steps for T = 1000, P = 99,
// c = 5 (benchmarks/detection_sim.md gives measured times). The result
// depends only on the values and the seed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace perfwatch::analysis {

struct ChangePointOptions {
  int min_segment = 3;        // values on each side of every change point (at least 2)
  double max_p = 0.01;        // permutation p-value at or below which a candidate is accepted
  int permutations = 99;      // p-values are multiples of 1 / (permutations + 1): with the
                              // defaults a candidate is accepted only when none of the 99
                              // shuffles reaches its statistic (p = 0.01)
  std::uint64_t seed = 20140101;
  int max_change_points = 0;  // 0: no limit
};

struct ChangePoint {
  int index = 0;       // first value of the new segment: the commit that changed it
  double p_value = 1;  // permutation p-value when it was accepted
  double statistic = 0;      // Q of the split
  double mean_before = 0;    // mean of the segment that ends at index - 1
  double mean_after = 0;     // mean of the segment that starts at index
  double rel_change() const { return mean_after / mean_before - 1; }
};

// Change points sorted by index. REQUIRES: every value finite.
std::vector<ChangePoint> find_change_points(std::span<const double> values,
                                            const ChangePointOptions& options = {});

// Of `candidates` (change points of `values`), those that are also found,
// within one index, in `values` without its last element: a change point
// that appears with one commit and would be gone without it is not followed
// up yet. Stateless, so a restarted daemon decides exactly as before. Costs
// one more search when `candidates` is not empty; the daemon passes only the
// candidates it has not followed up before, so that a known step costs one
// search per commit, not two.
std::vector<ChangePoint> keep_persistent(std::span<const double> values,
                                         std::span<const ChangePoint> candidates,
                                         const ChangePointOptions& options = {});

// keep_persistent(values, find_change_points(values, options), options).
std::vector<ChangePoint> persistent_change_points(std::span<const double> values,
                                                  const ChangePointOptions& options = {});

// Long histories: the daemon passes the trailing window of the history
// (the last 100 commits, say) so that its work per commit does not grow with
// the history; indices are then relative to the window's first value. Change
// points older than the window were found (and recorded) when they were in it.

}  // namespace perfwatch::analysis
