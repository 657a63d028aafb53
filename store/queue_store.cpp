#include "store/queue_store.h"

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

// Bench and backfill are the same work (benchmark the commit); noise is other work.
constexpr const char* kWork = "(CASE kind WHEN 'noise' THEN 'noise' ELSE 'bench' END)";

const char* work_of(JobKind kind) { return kind == JobKind::kNoise ? "noise" : "bench"; }

JobRecord read_job_by_id(Database& db, JobId id) {
  Query q(db, std::string("SELECT ") + detail::kJobColumns + " FROM jobs j WHERE j.id = :id");
  q->bind(":id", id);
  if (!q->step()) raise(ErrorCode::kNotFound, "job " + std::to_string(id) + ": no such job");
  return detail::read_job(*q);
}

std::vector<RunId> runs_of_job(Database& db, JobId id) {
  Query q(db, "SELECT id FROM runs WHERE job_id = :job ORDER BY id");
  q->bind(":job", id);
  std::vector<RunId> out;
  while (q->step()) out.push_back(q->get<RunId>("id"));
  return out;
}

}  // namespace

Result<Enqueued> JobQueue::enqueue(const JobRequest& r) {
  return guard(db_, "enqueue " + std::string(to_string(r.kind)) + " of " + r.commit_sha, [&] {
    if (r.commit_sha.empty()) raise(ErrorCode::kInvalidArgument, "job: commit sha is empty");
    Transaction tx(db_);
    detail::check(tx.status());
    // A live job of the same work first; without `again`, any earlier one.
    Query existing(db_, std::string("SELECT id FROM jobs WHERE repo_id = :repo AND commit_sha = :sha AND ") + kWork +
                            " = :work AND (:again = 0 OR state IN ('queued', 'running')) "
                            "ORDER BY state IN ('queued', 'running') DESC, id DESC LIMIT 1");
    existing->bind(":repo", r.repo_id).bind(":sha", r.commit_sha).bind(":work", work_of(r.kind)).bind(":again", r.again);
    if (existing->step()) return Enqueued{existing->get<JobId>("id"), false};
    Query q(db_,
            "INSERT INTO jobs (repo_id, commit_sha, branch, kind, priority, options_json, enqueued_at) "
            "VALUES (:repo, :sha, :branch, :kind, :priority, :options, :now) RETURNING id");
    q->bind(":repo", r.repo_id)
        .bind(":sha", r.commit_sha)
        .bind(":branch", r.branch)
        .bind(":kind", to_string(r.kind))
        .bind(":priority", r.priority)
        .bind(":options", r.options)
        .bind(":now", db_.now());
    Enqueued out{q->returning<JobId>("id"), true};
    detail::check(tx.commit());
    return out;
  });
}

Result<std::optional<JobRecord>> JobQueue::claim_next() {
  return guard(db_, "claim next job", [&]() -> std::optional<JobRecord> {
    Transaction tx(db_);
    detail::check(tx.status());
    JobId id = 0;
    {
      Query q(db_,
              "SELECT id FROM jobs WHERE state = 'queued' "
              "ORDER BY priority DESC, coalesce(queue_position, id) LIMIT 1");
      if (!q->step()) return std::nullopt;
      id = q->get<JobId>("id");
    }
    {
      Query q(db_,
              "UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = :now, finished_at = NULL "
              "WHERE id = :id");
      q->bind(":now", db_.now()).bind(":id", id);
      q->run();
    }
    auto job = read_job_by_id(db_, id);
    detail::check(tx.commit());
    return job;
  });
}

Status JobQueue::finish(JobId job, JobState state, std::string_view message) {
  return guard(db_, "finish job " + std::to_string(job), [&] {
    if (state != JobState::kDone && state != JobState::kFailed && state != JobState::kSkipped)
      raise(ErrorCode::kInvalidArgument, "a job finishes done, failed or skipped, not " + std::string(to_string(state)));
    Transaction tx(db_);
    detail::check(tx.status());
    Query q(db_,
            "UPDATE jobs SET state = :state, finished_at = :now, message = :message "
            "WHERE id = :id AND (state = 'running' OR (state = 'queued' AND :state = 'skipped'))");
    q->bind(":state", to_string(state)).bind(":now", db_.now()).bind(":message", message).bind(":id", job);
    q->run();
    if (q->changes() == 0) {
      auto known = read_job_by_id(db_, job);  // kNotFound if absent
      raise(ErrorCode::kInvalidArgument, "job " + std::to_string(job) + ": is " + std::string(to_string(known.state)) +
                                             ", cannot become " + std::string(to_string(state)));
    }
    detail::check(tx.commit());
  });
}

Status JobQueue::interrupted_by_stop(JobId job, std::string_view message) {
  return guard(db_, "job " + std::to_string(job) + " interrupted by a stop", [&] {
    Query q(db_, "UPDATE jobs SET stops = stops + 1, message = :message WHERE id = :id AND state = 'running'");
    q->bind(":message", message).bind(":id", job);
    q->run();
    if (q->changes() == 0) {
      auto known = read_job_by_id(db_, job);  // kNotFound if absent
      raise(ErrorCode::kInvalidArgument,
            "job " + std::to_string(job) + ": is " + std::string(to_string(known.state)) + ", not running");
    }
  });
}

Result<Recovery> JobQueue::recover_after_crash(int max_attempts) {
  return guard(db_, "recover the queue after a crash", [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    std::vector<JobRecord> running;
    {
      Query q(db_, std::string("SELECT ") + detail::kJobColumns + " FROM jobs j WHERE j.state = 'running' ORDER BY j.id");
      while (q->step()) running.push_back(detail::read_job(*q));
    }
    Recovery out;
    UnixSeconds now = db_.now();
    for (const auto& job : running) {
      const std::string why = "cut off: the daemon stopped while job " + std::to_string(job.id) + " was running";
      {
        Query q(db_,
                "UPDATE runs SET status = 'cut_off', finished_at = :now, "
                "  message = CASE WHEN message = '' THEN :why ELSE message || '; ' || :why END, "
                "  trial_count = (SELECT count(*) FROM trials WHERE trials.run_id = runs.id) "
                "WHERE job_id = :job AND status = 'running' RETURNING id");
        q->bind(":now", now).bind(":why", why).bind(":job", job.id);
        while (q->step()) out.runs_cut_off.push_back(q->get<RunId>("id"));
      }
      {
        Query q(db_, "UPDATE jobs SET state = 'cut_off', finished_at = :now, message = :why WHERE id = :id");
        q->bind(":now", now).bind(":why", why).bind(":id", job.id);
        q->run();
      }
      out.cut_off.push_back(job.id);
      if (job.attempts - job.stops >= max_attempts) continue;
      Query q(db_,
              "INSERT INTO jobs (repo_id, commit_sha, branch, kind, attempts, stops, priority, options_json, retry_of, "
              "  queue_position, enqueued_at, message) "
              "SELECT repo_id, commit_sha, branch, kind, attempts, stops, priority, options_json, id, "
              "  coalesce(queue_position, id), :now, :message FROM jobs WHERE id = :id "
              "RETURNING id");
      q->bind(":now", now)
          .bind(":message", "re-queued: redoes job " + std::to_string(job.id) + ", which was cut off")
          .bind(":id", job.id);
      out.requeued.push_back(q->returning<JobId>("id"));
    }
    detail::check(tx.commit());
    return out;
  });
}

// ---------------------------------------------------------------- reads

Result<JobRecord> JobReader::job(JobId id) {
  return guard(db_, "read job", [&] {
    auto job = read_job_by_id(db_, id);
    job.run_ids = runs_of_job(db_, id);
    return job;
  });
}

Result<std::vector<JobRecord>> JobReader::jobs(const JobFilter& f) {
  return guard(db_, "list jobs", [&] {
    if (f.limit < 0 || f.offset < 0) raise(ErrorCode::kInvalidArgument, "limit and offset must be >= 0");
    Query q(db_, std::string("SELECT ") + detail::kJobColumns +
                     " FROM jobs j WHERE (:repo IS NULL OR j.repo_id = :repo) "
                     "AND (:state IS NULL OR j.state = :state) AND (:sha IS NULL OR j.commit_sha = :sha) "
                     "ORDER BY j.id DESC LIMIT :limit OFFSET :offset");
    std::optional<std::string> state;
    if (f.state) state = std::string(to_string(*f.state));
    q->bind(":repo", f.repo_id)
        .bind(":state", state)
        .bind(":sha", f.commit_sha)
        .bind(":limit", f.limit)
        .bind(":offset", f.offset);
    std::vector<JobRecord> out;
    while (q->step()) out.push_back(detail::read_job(*q));
    for (auto& job : out) job.run_ids = runs_of_job(db_, job.id);
    return out;
  });
}

Result<std::map<JobState, std::int64_t>> JobReader::counts() {
  return guard(db_, "count jobs", [&] {
    std::map<JobState, std::int64_t> out;
    for (auto s : {JobState::kQueued, JobState::kRunning, JobState::kDone, JobState::kFailed, JobState::kCutOff,
                   JobState::kSkipped})
      out[s] = 0;
    Query q(db_, "SELECT state, count(*) AS n FROM jobs GROUP BY state");
    while (q->step()) out[detail::read_enum(*q, "state", parse_job_state)] = q->get<std::int64_t>("n");
    return out;
  });
}

}  // namespace perfwatch::store
