#include "store/queue_store.h"

#include <cctype>

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
    Query existing(db_, std::string("SELECT id FROM jobs WHERE repo_id = :repo AND commit_sha = :sha AND testbed = :testbed AND ") +
                            kWork + " = :work AND (:again = 0 OR state IN ('queued', 'running')) "
                            "ORDER BY state IN ('queued', 'running') DESC, id DESC LIMIT 1");
    existing->bind(":repo", r.repo_id)
        .bind(":sha", r.commit_sha)
        .bind(":testbed", r.testbed)
        .bind(":work", work_of(r.kind))
        .bind(":again", r.again);
    if (existing->step()) return Enqueued{existing->get<JobId>("id"), false};
    Query q(db_,
            "INSERT INTO jobs (repo_id, commit_sha, branch, kind, priority, options_json, testbed, enqueued_at) "
            "VALUES (:repo, :sha, :branch, :kind, :priority, :options, :testbed, :now) RETURNING id");
    q->bind(":repo", r.repo_id)
        .bind(":sha", r.commit_sha)
        .bind(":branch", r.branch)
        .bind(":kind", to_string(r.kind))
        .bind(":priority", r.priority)
        .bind(":options", r.options)
        .bind(":testbed", r.testbed)
        .bind(":now", db_.now());
    Enqueued out{q->returning<JobId>("id"), true};
    detail::check(tx.commit());
    return out;
  });
}

Result<std::optional<JobRecord>> JobQueue::claim_next(const std::optional<std::string>& testbed) {
  return guard(db_, "claim next job", [&]() -> std::optional<JobRecord> {
    Transaction tx(db_);
    detail::check(tx.status());
    JobId id = 0;
    {
      Query q(db_,
              "SELECT id FROM jobs WHERE state = 'queued' AND (:any OR testbed = :testbed) "
              "ORDER BY priority DESC, coalesce(queue_position, id) LIMIT 1");
      q->bind(":any", !testbed.has_value()).bind(":testbed", testbed.value_or(""));
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
      if (job.attempts - job.stops >= max_attempts) {
        const std::string gave_up = "gave up after " + std::to_string(job.attempts - job.stops) +
                                    " attempt(s), each cut off (" + std::to_string(job.stops) +
                                    " interruption(s) by a stop not counted): " + why;
        Query q(db_, "UPDATE jobs SET state = 'gave_up', finished_at = :now, message = :why WHERE id = :id");
        q->bind(":now", now).bind(":why", gave_up).bind(":id", job.id);
        q->run();
        out.gave_up.push_back(read_job_by_id(db_, job.id));
        continue;
      }
      {
        Query q(db_, "UPDATE jobs SET state = 'cut_off', finished_at = :now, message = :why WHERE id = :id");
        q->bind(":now", now).bind(":why", why).bind(":id", job.id);
        q->run();
      }
      out.cut_off.push_back(job.id);
      Query q(db_,
              "INSERT INTO jobs (repo_id, commit_sha, branch, kind, attempts, stops, priority, options_json, testbed, retry_of, "
              "  queue_position, enqueued_at, message) "
              "SELECT repo_id, commit_sha, branch, kind, attempts, stops, priority, options_json, testbed, id, "
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

Result<Requeued> JobQueue::requeue(std::optional<RepoId> repo, std::string_view commit_sha, std::string_view by) {
  return guard(db_, "re-queue commit " + std::string(commit_sha), [&] {
    std::string prefix(commit_sha);
    for (char& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool hex = prefix.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex || prefix.size() < 4 || prefix.size() > 64)
      raise(ErrorCode::kInvalidArgument, "commit '" + std::string(commit_sha) + "': must be a sha or a prefix of 4 to 64 hex digits");
    Transaction tx(db_);
    detail::check(tx.status());
    // The commit the prefix names, among the jobs.
    std::vector<std::string> shas;
    {
      Query q(db_, "SELECT DISTINCT commit_sha FROM jobs WHERE (:repo IS NULL OR repo_id = :repo) "
                   "AND substr(commit_sha, 1, :n) = :prefix ORDER BY commit_sha LIMIT 3");
      q->bind(":repo", repo).bind(":n", static_cast<std::int64_t>(prefix.size())).bind(":prefix", prefix);
      while (q->step()) shas.push_back(q->get<std::string>("commit_sha"));
    }
    if (shas.empty()) raise(ErrorCode::kNotFound, "commit " + prefix + ": no job of this commit");
    if (shas.size() > 1)
      raise(ErrorCode::kInvalidArgument, "commit " + prefix + ": names several commits (" + shas[0].substr(0, 12) +
                                             ", " + shas[1].substr(0, 12) + (shas.size() > 2 ? ", ..." : "") +
                                             "): give more digits");
    const std::string& sha = shas[0];
    std::optional<JobRecord> given_up;
    {
      Query q(db_, std::string("SELECT ") + detail::kJobColumns +
                       " FROM jobs j WHERE (:repo IS NULL OR j.repo_id = :repo) AND j.commit_sha = :sha "
                       "AND j.state = 'gave_up' AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.retry_of = j.id) "
                       "ORDER BY j.id DESC LIMIT 1");
      q->bind(":repo", repo).bind(":sha", sha);
      if (q->step()) given_up = detail::read_job(*q);
    }
    if (!given_up) {
      Query q(db_, std::string("SELECT ") + detail::kJobColumns +
                       " FROM jobs j WHERE (:repo IS NULL OR j.repo_id = :repo) AND j.commit_sha = :sha "
                       "ORDER BY j.id DESC LIMIT 1");
      q->bind(":repo", repo).bind(":sha", sha);
      std::string newest;
      if (q->step()) {
        auto job = detail::read_job(*q);
        newest = ": its newest job, " + std::to_string(job.id) + ", is " + std::string(to_string(job.state));
      }
      raise(ErrorCode::kInvalidArgument, "commit " + sha.substr(0, 10) + ": no job of it was given up" + newest +
                                             " (only a given-up job is re-queued)");
    }
    {
      Query q(db_, std::string("SELECT id, state FROM jobs WHERE repo_id = :repo AND commit_sha = :sha AND testbed = :testbed AND ") +
                       kWork + " = :work AND state IN ('queued', 'running') LIMIT 1");
      q->bind(":repo", given_up->repo_id)
          .bind(":sha", sha)
          .bind(":testbed", given_up->testbed)
          .bind(":work", work_of(given_up->kind));
      if (q->step())
        raise(ErrorCode::kInvalidArgument, "commit " + sha.substr(0, 10) + ": job " +
                                               std::to_string(q->get<JobId>("id")) + " of it is " +
                                               q->get<std::string>("state") + " already");
    }
    Query q(db_,
            "INSERT INTO jobs (repo_id, commit_sha, branch, kind, attempts, stops, priority, options_json, testbed, retry_of, "
            "  queue_position, enqueued_at, message) "
            "SELECT repo_id, commit_sha, branch, kind, 0, 0, priority, options_json, testbed, id, "
            "  coalesce(queue_position, id), :now, :message FROM jobs WHERE id = :id "
            "RETURNING id");
    q->bind(":now", db_.now())
        .bind(":message", "re-queued by " + std::string(by.empty() ? "hand" : by) + ": redoes job " +
                              std::to_string(given_up->id) + ", which was given up on")
        .bind(":id", given_up->id);
    const JobId id = q->returning<JobId>("id");
    {
      Query mark(db_, "UPDATE jobs SET state = 'cut_off', message = message || :note WHERE id = :id");
      mark->bind(":note", "; re-queued by " + std::string(by.empty() ? "hand" : by) + " as job " + std::to_string(id))
          .bind(":id", given_up->id);
      mark->run();
    }
    Requeued out{read_job_by_id(db_, given_up->id), read_job_by_id(db_, id)};
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
                   JobState::kSkipped, JobState::kGaveUp})
      out[s] = 0;
    Query q(db_, "SELECT state, count(*) AS n FROM jobs GROUP BY state");
    while (q->step()) out[detail::read_enum(*q, "state", parse_job_state)] = q->get<std::int64_t>("n");
    return out;
  });
}

}  // namespace perfwatch::store
