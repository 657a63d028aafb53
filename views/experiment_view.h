// Experiments and negative results: a search (the API's
// GET /api/v1/experiments, `perfwatch query experiments --json`;
// schemas/api/experiments.schema.json) and one experiment (GET
// /api/v1/experiments/{id}, `perfwatch experiment show|add --json`;
// schemas/api/experiment.schema.json), each with its evidence table and its
// headlines ("num_warps=8 REJECTED: worse +14.2..+18.0% time_us at ..."),
// printed as JSON or text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/experiment_store.h"

namespace perfwatch::views {

struct ExperimentsRequest {
  std::optional<store::RepoId> repo;
  std::string text;                        // words that must all occur
  std::optional<store::ExperimentVerdict> verdict;
  std::optional<store::ExperimentSource> source;
  std::vector<std::string> params;         // "name=value", each a candidate's params must have
  std::string group;                       // a Perf-Experiment id
  std::optional<std::string> commit;       // experiments about this commit (sha or prefix)
  std::optional<store::TestbedId> testbed; // experiments judged on this testbed
  std::optional<store::UnixSeconds> since, until;
  int limit = 20;                          // newest first, 1..kExperimentsLimitMax
  int offset = 0;
  bool evidence = true;                    // with each one's evidence table
};
inline constexpr int kExperimentsLimitMax = 100;

struct ExperimentEntry {
  store::ExperimentDetail detail;
  std::vector<std::string> ref_shas;   // per experiment.refs: the commit's sha ("" for none)
  std::vector<std::string> headlines;  // one per candidate
};

struct ExperimentsView {
  int limit = 0;
  int offset = 0;
  bool has_more = false;
  bool evidence = true;
  std::vector<ExperimentEntry> experiments;
  std::map<store::PointId, std::string> labels;
};

// kInvalidArgument "param" for a malformed name=value, "limit"/"offset" out
// of range; "commit" and "repo" as views::resolve_* say.
Result<ExperimentsView> experiments_view(store::Database& db, const ExperimentsRequest& request);
nlohmann::json experiments_document(const ExperimentsView& view);
// Each experiment in full (experiment_text), or with `brief` one line per
// experiment and candidate: "#12 auto 3f2a9c1e05  num_warps=8 REJECTED: ...".
std::string experiments_text(const ExperimentsView& view, bool brief);

// One experiment; kNotFound "experiment" for an unknown id.
struct ExperimentView {
  ExperimentEntry entry;
  std::map<store::PointId, std::string> labels;
};
Result<ExperimentView> experiment_view(store::Database& db, store::ExperimentId id);
nlohmann::json experiment_document(const ExperimentView& view);
// The experiment, its headline(s), its evidence table (point, baseline,
// candidate, delta, band, p, runs, verdict) and its conclusion.
std::string experiment_text(const ExperimentEntry& entry);

// The verdict as people are told it: the stored one, except that no_effect
// while a point of the evidence is still undecided reads "undecided" (the
// evidence has not ruled an effect out there).
std::string shown_verdict(const store::ExperimentDetail& detail);

// One line per candidate: "num_warps=8 REJECTED: worse +14.2..+18.0% time_us
// at C1, C8; no effect at 4 point(s)". Pending experiments say so.
std::vector<std::string> experiment_headlines(const store::ExperimentDetail& detail);

// "num_warps=8 num_stages=3": the candidate's params that differ from the
// baseline's (all when none differ).
std::string params_diff(const nlohmann::json& baseline_params, const nlohmann::json& candidate_params);

}  // namespace perfwatch::views
