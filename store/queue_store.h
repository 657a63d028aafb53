// The daemon's job queue, in the same database as the results so that a
// job's state and the runs it produced change together.
//
// Life of a job: queued -> running (claim_next) -> done | failed | skipped
// (finish). A job found `running` when the daemon starts belonged to a
// daemon that was killed: recover_after_crash marks it and its running runs
// cut_off and queues one new job that redoes it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::store {

struct JobRequest {
  RepoId repo_id = 0;
  std::string commit_sha;
  std::string branch;
  JobKind kind = JobKind::kBench;
  std::int64_t priority = 0;  // higher first
  nlohmann::json options = nlohmann::json::object();
  // false: a commit that already has a job of the same work (bench and
  // backfill are the same work; noise is other work), in any state, is not
  // queued again. true: queue it again unless one is queued or running.
  bool again = false;
};

struct Enqueued {
  JobId id = 0;
  bool created = false;  // false: `id` is the existing job
};

struct Recovery {
  std::vector<JobId> cut_off;        // jobs found running, now cut_off
  std::vector<JobId> requeued;       // their new jobs (one each, unless out of attempts)
  std::vector<RunId> runs_cut_off;   // their runs that were running
};

class JobQueue {
 public:
  explicit JobQueue(Database& db) : db_(db) {}

  // Queues a job unless it would duplicate one (see JobRequest::again);
  // never two queued-or-running jobs of the same work for one commit, even
  // with two writers racing (a unique index says so).
  Result<Enqueued> enqueue(const JobRequest& request);

  // In one transaction: the queued job of highest priority (oldest first
  // among equals) becomes running, attempts + 1, started_at = now.
  // nullopt when nothing is queued.
  Result<std::optional<JobRecord>> claim_next();

  // Ends a job: running -> done | failed | skipped; queued -> skipped (a
  // commit that no longer exists). kInvalidArgument for another transition.
  Status finish(JobId job, JobState state, std::string_view message);

  // A running job interrupted by a stop request (SIGTERM): it stays running,
  // for recover_after_crash at the next start, and the interruption counts
  // as a stop, not as an attempt (stops + 1). kInvalidArgument unless running.
  Status interrupted_by_stop(JobId job, std::string_view message);

  // Call once when the daemon starts, before claiming. In one transaction:
  // every running job becomes cut_off, its running runs become cut_off, and
  // a new queued job redoes it (retry_of = the old one, attempts carried
  // over) unless it has been claimed max_attempts times already, stops
  // not counted (attempts - stops). Running it again finds nothing to do:
  // each cut-off job is re-queued exactly once.
  Result<Recovery> recover_after_crash(int max_attempts = 3);

 private:
  Database& db_;
};

struct JobFilter {
  std::optional<RepoId> repo_id;
  std::optional<JobState> state;
  std::optional<std::string> commit_sha;
  int limit = 100;  // newest first
  int offset = 0;
};

class JobReader {
 public:
  explicit JobReader(Database& db) : db_(db) {}

  Result<JobRecord> job(JobId id);  // with its run ids; kNotFound if absent
  Result<std::vector<JobRecord>> jobs(const JobFilter& filter);
  // Queue length by state (every state present, zero included).
  Result<std::map<JobState, std::int64_t>> counts();

 private:
  Database& db_;
};

}  // namespace perfwatch::store
