// The daemon's job queue, in the same database as the results so that a
// job's state and the runs it produced change together.
//
// Life of a job: queued -> running (claim_next) -> done | failed | skipped
// (finish). A job found `running` when the daemon starts belonged to a
// daemon that was killed: recover_after_crash marks it and its running runs
// cut_off and queues one new job that redoes it -- or, once it has been cut
// off max_attempts times, marks it gave_up: then only requeue() (a person:
// `perfwatch jobs requeue`) queues it again.
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
  std::string testbed;  // the executor's testbed to measure on; empty: the daemon's only one
};

struct Enqueued {
  JobId id = 0;
  bool created = false;  // false: `id` is the existing job
};

struct Recovery {
  std::vector<JobId> cut_off;        // jobs found running, now cut_off
  std::vector<JobId> requeued;       // their new jobs (one each, unless out of attempts)
  std::vector<JobRecord> gave_up;    // jobs found running and out of attempts, now gave_up (not in cut_off)
  std::vector<RunId> runs_cut_off;   // their runs that were running
};

struct Requeued {
  JobRecord given_up;  // the job that was given up on, now cut_off (redone), its message saying by whom
  JobRecord job;       // the new queued job that redoes it
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
  // nullopt when nothing is queued. With `testbed`, only that testbed's jobs
  // (each testbed's worker claims its own).
  Result<std::optional<JobRecord>> claim_next(const std::optional<std::string>& testbed = std::nullopt);

  // Ends a job: running -> done | failed | skipped; queued -> skipped (a
  // commit that no longer exists). kInvalidArgument for another transition.
  Status finish(JobId job, JobState state, std::string_view message);

  // A running job interrupted by a stop request (SIGTERM): it stays running,
  // for recover_after_crash at the next start, and the interruption counts
  // as a stop, not as an attempt (stops + 1). kInvalidArgument unless running.
  Status interrupted_by_stop(JobId job, std::string_view message);

  // Call once when the daemon starts, before claiming. In one transaction:
  // every running job's running runs become cut_off, and the job becomes
  // cut_off with a new queued job that redoes it (retry_of = the old one,
  // attempts carried over) -- unless it has been claimed max_attempts times
  // already, stops not counted (attempts - stops): then it becomes gave_up,
  // its message saying after how many attempts and why, and nothing redoes
  // it. Running it again finds nothing to do: each cut-off job is re-queued
  // exactly once.
  Result<Recovery> recover_after_crash(int max_attempts = 3);

  // A commit given up on, queued again by a person, in one transaction: the
  // newest job of `commit_sha` (a full sha, or a prefix of 4+ hex digits
  // that names one commit among the jobs) in state gave_up gets one new
  // queued job (retry_of = it; attempts and stops from 0, so it has
  // max_attempts again; its place in the queue is the given-up job's), and
  // becomes cut_off -- what a job redone after a crash is -- with "; re-queued
  // by <by> as job N" added to its message. So gave_up always means "given
  // up, and nothing redoes it". `repo`: nullopt for any repo.
  // kNotFound: the commit has no job at all. kInvalidArgument: the sha is
  // not hex, the prefix names several commits, none of the commit's jobs is
  // given up and not yet redone (the message names its newest job's state),
  // or a job of the same work is queued or running for it (named).
  Result<Requeued> requeue(std::optional<RepoId> repo, std::string_view commit_sha, std::string_view by);

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
