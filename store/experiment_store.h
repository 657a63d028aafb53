// Experiments and negative results: a hypothesis, a baseline, candidates, a
// verdict with its per-point evidence, and a conclusion -- kept so that
// "did we ever try num_warps=8? what happened?" has an answer.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::store {

class ExperimentWriter {
 public:
  explicit ExperimentWriter(Database& db) : db_(db) {}

  // Creates an experiment, or -- when its ident is set and known -- updates
  // that one: hypothesis, baseline, candidates, metric, verdict; an empty
  // conclusion keeps the stored one (a person's words are not erased by a
  // re-analysis). Refs are added to those stored. Returns the id.
  Result<ExperimentId> put_experiment(const ExperimentRecord& experiment);

  // Replaces the experiment's evidence table (all rows, one transaction).
  Status set_evidence(ExperimentId experiment, std::span<const EvidenceRecord> evidence);

  // A person's verdict and conclusion (`perfwatch experiment conclude`);
  // verdict nullopt keeps the stored one. kNotFound for an unknown id.
  Status conclude(ExperimentId experiment, std::optional<ExperimentVerdict> verdict, std::string_view conclusion);

  Status add_ref(ExperimentId experiment, const ExperimentRef& ref);

 private:
  Database& db_;
};

struct ExperimentFilter {
  // Words to find in hypothesis, conclusion, group key, baseline and
  // candidates (all words must occur; full-text search, case-insensitive).
  std::string text;
  std::optional<ExperimentVerdict> verdict;
  std::optional<ExperimentSource> source;
  // name=value pairs that one candidate's params must all have, e.g.
  // {"num_warps","8"}. A value that reads as a number matches the number.
  std::vector<std::pair<std::string, std::string>> params;
  std::string group_key;
  std::optional<RepoId> repo_id;
  std::optional<CommitId> commit_id;  // experiments that refer to this commit
  std::optional<TestbedId> testbed_id;  // experiments judged on this testbed
  std::optional<UnixSeconds> since;   // created_at >= since
  std::optional<UnixSeconds> until;   // created_at < until
  int limit = 100;                    // newest first
  int offset = 0;
};

struct EvidenceView {
  EvidenceRecord evidence;
  std::string point_key;
  std::string point_label;  // what people call the point ("C48")
};

struct ExperimentDetail {
  ExperimentRecord experiment;
  std::vector<EvidenceView> evidence;  // by candidate, then point (in the order points were first stored)
};

class ExperimentReader {
 public:
  explicit ExperimentReader(Database& db) : db_(db) {}

  // kInvalidArgument for a malformed param name (letters, digits, _).
  Result<std::vector<ExperimentRecord>> search(const ExperimentFilter& filter);
  Result<ExperimentDetail> experiment(ExperimentId id);  // kNotFound if absent
  Result<std::optional<ExperimentRecord>> find_by_ident(std::string_view ident);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
