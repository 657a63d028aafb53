// What the statistics module (analysis/) computes and the store keeps: run
// summaries, commits' pooled values, noise bands, comparisons and flags.
// All of these are derived from trials and runs, so recomputing one updates
// it in place (runs and trials themselves are never overwritten).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::store {

struct RaisedFlag {
  FlagId id = 0;
  bool created = false;  // false when the flag existed: fire a webhook only when true
};

class AnalysisWriter {
 public:
  explicit AnalysisWriter(Database& db) : db_(db) {}

  // Stores (or replaces) the summary of run x variant x point.
  Status put_summary(const SummaryRecord& summary);
  Status put_summaries(std::span<const SummaryRecord> summaries);  // one transaction

  Status put_commit_summary(const CommitSummaryRecord& summary);
  Status put_noise_band(const NoiseBandRecord& band);

  // Stores or updates the comparison of this commit x against x testbed x
  // variant x point; its id stays the same across updates.
  Result<ComparisonId> put_comparison(const ComparisonRecord& comparison);

  // Raises a flag, or refreshes (magnitude, comparison, detail) the one that
  // exists for commit x testbed x variant x point x kind, keeping its
  // created_at and acknowledgement.
  Result<RaisedFlag> raise_flag(const FlagRecord& flag);

  // Refreshes a flag that stands (or stood) with new evidence: magnitude,
  // comparison and detail; a withdrawn flag is reinstated. Its kind, creation
  // time and acknowledgement stay. kNotFound for an unknown flag.
  Status update_flag(FlagId flag, double magnitude_rel, std::optional<ComparisonId> comparison,
                     const nlohmann::json& detail);

  // Withdraws a flag that its re-judged evidence no longer supports, saying why.
  // kNotFound for an unknown flag, kInvalidArgument for an empty reason.
  Status withdraw_flag(FlagId flag, std::string_view reason);

  // Acknowledges a flag with a reason (again: replaces the acknowledgement).
  // kNotFound for an unknown flag, kInvalidArgument for an empty reason.
  Status acknowledge_flag(FlagId flag, std::string_view reason, std::string_view by);

 private:
  Database& db_;
};

// A run's median at a point, for the statistics between runs and commits.
struct RunMedian {
  RunId run_id = 0;
  std::string variant;
  PointId point_id = 0;
  double median = 0;
  std::int64_t n = 0;
  UnixSeconds started_at = 0;
};

// Open: neither acknowledged nor withdrawn. Acknowledged: a person looked.
// Withdrawn: judging took it back (its evidence grew and no longer holds).
enum class FlagState { kAny, kOpen, kAcknowledged, kWithdrawn };

struct FlagFilter {
  std::optional<RepoId> repo_id;
  FlagState state = FlagState::kAny;
  std::optional<FlagKind> kind;
  std::optional<CommitId> commit_id;
  std::optional<TestbedId> testbed_id;
  std::optional<std::string> variant;
  std::optional<PointId> point_id;
  int limit = 100;  // newest first
  int offset = 0;
};

// A flag with what a list shows next to it.
struct FlagView {
  FlagRecord flag;
  RepoId repo_id = 0;
  std::string sha;
  std::string subject;
  std::string point_key;
};

class AnalysisReader {
 public:
  explicit AnalysisReader(Database& db) : db_(db) {}

  // Medians of the `ok` runs of a commit of this kind on a testbed, per
  // variant x point (rows without a median are left out).
  Result<std::vector<RunMedian>> run_medians(CommitId commit, TestbedId testbed, RunKind kind = RunKind::kBench);

  Result<std::optional<CommitSummaryRecord>> commit_summary(CommitId commit, TestbedId testbed,
                                                           std::string_view variant, PointId point);
  Result<std::vector<CommitSummaryRecord>> commit_summaries(CommitId commit);

  Result<std::optional<NoiseBandRecord>> noise_band(TestbedId testbed, std::string_view variant, PointId point);
  Result<std::vector<NoiseBandRecord>> noise_bands(TestbedId testbed);

  Result<ComparisonRecord> comparison(ComparisonId id);  // kNotFound if absent
  Result<std::vector<ComparisonRecord>> comparisons_of_commit(CommitId commit);
  // The comparisons that use `commit` as their reference (against_commit_id):
  // stale once it gets more runs.
  Result<std::vector<ComparisonRecord>> comparisons_against(CommitId commit);

  Result<FlagView> flag(FlagId id);  // kNotFound if absent
  Result<std::vector<FlagView>> flags(const FlagFilter& filter);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
