// A branch history written straight into a temporary store, for testing
// judging without git or a bench: commits on one first-parent chain, and
// runs whose medians the test chooses (exactly, or with run-to-run noise).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "judge/commit_runs.h"
#include "runner/manifest.h"
#include "store/database.h"
#include "store/records.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::judge::testing {

#define PW_ASSERT_OK(expr)                                                 \
  do {                                                                     \
    auto&& pw_result_ = (expr);                                            \
    ASSERT_TRUE(pw_result_.has_value()) << pw_result_.error().to_string(); \
  } while (0)

// A cell's true value at a commit: variant, batch -> time in us.
using TrueValue = std::function<double(const std::string& variant, int batch)>;

class SyntheticHistory {
 public:
  // Variants base (the baseline) and wide; batches 1 and 8.
  SyntheticHistory();

  // The manifest judging reads (the fake bench's shape): runs.per_commit 3.
  static runner::Manifest manifest(int max_per_commit = 8, const std::string& pinned_baseline = "");

  store::Database& db() { return *db_; }
  store::RepoId repo() const { return repo_; }
  store::TestbedId testbed() const { return testbed_; }
  Cell cell(const std::string& variant, int batch) const { return {variant, points_.at(batch)}; }
  const std::vector<std::string>& variants() const { return variants_; }
  const std::vector<int>& batches() const { return batches_; }

  // A commit whose parent is the last one added, unmeasured.
  store::CommitRecord add_commit(const std::string& subject = "");
  // One ok run of `kind` of every variant x point at these values.
  store::RunId add_run(const store::CommitRecord& commit, const TrueValue& value,
                       store::RunKind kind = store::RunKind::kBench);
  // `n` runs at the true values, each cell times a lognormal run factor of
  // sigma `noise` (process-to-process noise).
  std::vector<store::RunId> add_runs(const store::CommitRecord& commit, int n, const TrueValue& value, double noise);
  // A bench process that failed (it counts against the budget, has no values).
  store::RunId add_failed_run(const store::CommitRecord& commit);

  // The flags of a commit (any state).
  std::vector<store::FlagRecord> flags_of(const store::CommitRecord& commit);

  std::mt19937_64& rng() { return rng_; }

 private:
  perfwatch::testing::TempDir dir_{"perfwatch-judge-test"};
  std::unique_ptr<store::Database> db_;
  store::RepoId repo_ = 0;
  store::TestbedId testbed_ = 0;
  std::vector<std::string> variants_ = {"base", "wide"};
  std::vector<int> batches_ = {1, 8};
  std::map<int, store::PointId> points_;
  std::vector<store::CommitRecord> commits_;
  std::mt19937_64 rng_{20261201};
};

// Writes one ok run of `kind` of a commit: every variant x point (of
// `points`: batch -> point id) at `value`; the first variant is the baseline.
store::RunId write_run(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                       const std::vector<std::string>& variants, const std::map<int, store::PointId>& points,
                       const TrueValue& value, store::RunKind kind = store::RunKind::kBench);

// The points of the synthetic manifest (batches 1 and 8), created if absent.
std::map<int, store::PointId> ensure_points(store::Database& db, const std::vector<int>& batches);

// Constant values: every cell at `us`.
inline TrueValue flat(double us) {
  return [us](const std::string&, int) { return us; };
}

}  // namespace perfwatch::judge::testing
