// The daemon's queue: jobs newest first with the counts by state, a running
// job's live progress, a given-up job's attempts and why -- the API's GET
// /api/v1/jobs and `perfwatch jobs [--json]` (schemas/api/jobs.schema.json).
// One model, printed as JSON or text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/queue_store.h"

namespace perfwatch::views {

struct JobsRequest {
  std::optional<store::RepoId> repo;
  std::optional<store::JobState> state;
  std::optional<std::string> commit;  // a full sha: only this commit's jobs
  int limit = 50;                     // newest first, 1..kJobsLimitMax
  int offset = 0;
};
inline constexpr int kJobsLimitMax = 500;

struct JobsView {
  int limit = 0;
  int offset = 0;
  bool has_more = false;
  std::map<store::JobState, std::int64_t> counts;  // the whole queue, by state
  std::vector<store::JobRecord> jobs;
  // A running job's progress (the "progress" object of the document), by job id.
  std::map<store::JobId, nlohmann::json> progress;
};

// kInvalidArgument "limit"/"offset" out of range.
Result<JobsView> jobs_view(store::Database& db, const JobsRequest& request);
nlohmann::json jobs_document(const JobsView& view);
// One line per job: id, state, kind, commit, attempts (stops), when, then its
// message; a given-up job says how to re-queue it.
std::string jobs_text(const JobsView& view);

}  // namespace perfwatch::views
