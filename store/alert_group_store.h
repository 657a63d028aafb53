// Alert groups: the flags of one commit on one testbed, triaged as one.
//
// A group is not a row of its own: it is its flags (analysis_store.h), plus
// at most one triage record saying what was decided about it (records.h,
// GroupTriageRecord). Triaging a group acknowledges each of its standing
// flags that is not acknowledged yet, in the same transaction, so "open"
// keeps one meaning everywhere: a flag neither acknowledged nor withdrawn.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::store {

class AlertGroupWriter {
 public:
  explicit AlertGroupWriter(Database& db) : db_(db) {}

  // Records `triage` for its commit x testbed (replacing an earlier one) and
  // acknowledges the group's standing, unacknowledged flags -- all of them,
  // or only those in `only` when it is given -- with the reason
  // "<triage>: <reason>" by `triage.by`. Returns how many flags it
  // acknowledged. kNotFound when the group has no standing flag (nothing to
  // triage); kInvalidArgument for an empty reason, or a link that does not
  // match the triage (recovered/recovery need one, the others none).
  // `triage.at` 0: the store's clock.
  Result<int> triage(const GroupTriageRecord& triage, std::optional<std::span<const FlagId>> only = std::nullopt);

 private:
  Database& db_;
};

class AlertGroupReader {
 public:
  explicit AlertGroupReader(Database& db) : db_(db) {}

  // The triage of a group; nullopt when it was never triaged.
  Result<std::optional<GroupTriageRecord>> triage(CommitId commit, TestbedId testbed);
  // Every group triage of a repository's commits (few: one per flagged commit).
  Result<std::vector<GroupTriageRecord>> triages(RepoId repo);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
