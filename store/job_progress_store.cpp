#include "store/job_progress_store.h"

#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

JobProgress read_progress(detail::Statement& q) {
  JobProgress p;
  p.job_id = q.get<JobId>("job_id");
  p.step = q.get<std::string>("step");
  p.detail = q.get<nlohmann::json>("detail_json");
  p.updated_at = q.get<UnixSeconds>("updated_at");
  return p;
}

}  // namespace

Status JobProgressWriter::set(JobId job, std::string_view step, const nlohmann::json& detail) {
  return guard(db_, "set progress of job " + std::to_string(job), [&] {
    {
      Query known(db_, "SELECT 1 AS one FROM jobs WHERE id = :id");
      known->bind(":id", job);
      if (!known->step()) raise(ErrorCode::kNotFound, "job " + std::to_string(job) + ": no such job");
    }
    Query q(db_,
            "INSERT INTO job_progress (job_id, step, detail_json, updated_at) VALUES (:job, :step, :detail, :now) "
            "ON CONFLICT (job_id) DO UPDATE SET step = excluded.step, detail_json = excluded.detail_json, "
            "  updated_at = excluded.updated_at");
    q->bind(":job", job).bind(":step", step).bind(":detail", detail).bind(":now", db_.now());
    q->run();
  });
}

Result<std::optional<JobProgress>> JobProgressReader::progress(JobId job) {
  return guard(db_, "read progress of job " + std::to_string(job), [&]() -> std::optional<JobProgress> {
    Query q(db_, "SELECT job_id, step, detail_json, updated_at FROM job_progress WHERE job_id = :job");
    q->bind(":job", job);
    if (!q->step()) return std::nullopt;
    return read_progress(*q);
  });
}

Result<std::vector<JobProgress>> JobProgressReader::running() {
  return guard(db_, "read progress of running jobs", [&] {
    Query q(db_,
            "SELECT p.job_id AS job_id, p.step AS step, p.detail_json AS detail_json, p.updated_at AS updated_at "
            "FROM jobs j JOIN job_progress p ON p.job_id = j.id WHERE j.state = 'running' ORDER BY j.id");
    std::vector<JobProgress> out;
    while (q->step()) out.push_back(read_progress(*q));
    return out;
  });
}

}  // namespace perfwatch::store
