#include "store/job_progress_store.h"

#include <array>
#include <utility>

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;
using nlohmann::json;

namespace {

constexpr std::array<std::pair<JobStep, std::string_view>, 8> kSteps = {{
    {JobStep::kClaimed, "claimed"},
    {JobStep::kBuild, "build"},
    {JobStep::kRun, "run"},
    {JobStep::kAnalyse, "analyse"},
    {JobStep::kDone, "done"},
    {JobStep::kFailed, "failed"},
    {JobStep::kSkipped, "skipped"},
    {JobStep::kCutOff, "cut_off"},
}};

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// The stored detail, field by field; a value of the wrong type is a damaged
// row (kInternal), named.
class Detail {
 public:
  Detail(const json& doc, JobId job) : doc_(doc), job_(job) {}

  const json* find(std::initializer_list<const char*> keys) const {
    for (const char* key : keys) {
      auto it = doc_.find(key);
      if (it != doc_.end() && !it->is_null()) return &*it;
    }
    return nullptr;
  }
  std::string text(std::initializer_list<const char*> keys) const {
    const json* v = find(keys);
    if (!v) return "";
    if (!v->is_string()) bad(*keys.begin(), "a string");
    return v->get<std::string>();
  }
  template <class T>
  std::optional<T> number(const char* key) const {
    const json* v = find({key});
    if (!v) return std::nullopt;
    if (std::is_integral_v<T> ? !v->is_number_integer() : !v->is_number()) bad(key, "a number");
    return v->get<T>();
  }

 private:
  [[noreturn]] void bad(const char* key, const char* what) const {
    raise(ErrorCode::kInternal,
          "job " + std::to_string(job_) + ": progress detail: " + key + ": must be " + what + " (damaged row)");
  }
  const json& doc_;
  JobId job_;
};

JobProgress read_progress(detail::Statement& q) {
  JobProgress p;
  p.job_id = q.get<JobId>("job_id");
  p.step = detail::read_enum(q, "step", parse_job_step);
  p.updated_at = q.get<UnixSeconds>("updated_at");
  const json doc = q.get<json>("detail_json");
  if (!doc.is_object()) return p;
  // Rows written before the record was typed used "of" and "kind" for what
  // is now "measuring" and "run_kind"; everything else kept its word.
  Detail d(doc, p.job_id);
  p.commit = d.text({"commit"});
  p.measuring = d.text({"measuring", "of"});
  if (std::string kind = d.text({"run_kind", "kind"}); !kind.empty()) {
    p.run_kind = parse_run_kind(kind);
    if (!p.run_kind)
      raise(ErrorCode::kInternal, "job " + std::to_string(p.job_id) + ": progress detail: run_kind: unknown word '" +
                                      kind + "' (damaged row)");
  }
  p.purpose = d.text({"purpose"});
  p.run = d.number<int>("run");
  p.runs_planned = d.number<int>("runs_planned");
  p.point_index = d.number<int>("point_index");
  p.points = d.number<int>("points");
  p.point = d.text({"point"});
  p.variant = d.text({"variant"});
  p.trials = d.number<std::int64_t>("trials");
  p.elapsed_s = d.number<double>("elapsed_s");
  p.message = d.text({"message"});
  return p;
}

}  // namespace

std::string_view to_string(JobStep step) {
  for (const auto& [s, word] : kSteps)
    if (s == step) return word;
  return "claimed";
}

std::optional<JobStep> parse_job_step(std::string_view word) {
  for (const auto& [s, w] : kSteps)
    if (w == word) return s;
  return std::nullopt;
}

std::optional<JobStep> final_step(JobState state) {
  switch (state) {
    case JobState::kDone: return JobStep::kDone;
    case JobState::kFailed: return JobStep::kFailed;
    case JobState::kSkipped: return JobStep::kSkipped;
    case JobState::kCutOff:
    case JobState::kGaveUp: return JobStep::kCutOff;
    case JobState::kQueued:
    case JobState::kRunning: return std::nullopt;
  }
  return std::nullopt;
}

json to_json(const JobProgress& p) {
  return {{"schema_version", kJobProgressSchemaVersion},
          {"job_id", p.job_id},
          {"step", to_string(p.step)},
          {"commit", p.commit},
          {"measuring", p.measuring},
          {"run_kind", p.run_kind ? json(to_string(*p.run_kind)) : json(nullptr)},
          {"purpose", p.purpose},
          {"run", or_null(p.run)},
          {"runs_planned", or_null(p.runs_planned)},
          {"point_index", or_null(p.point_index)},
          {"points", or_null(p.points)},
          {"point", p.point},
          {"variant", p.variant},
          {"trials", or_null(p.trials)},
          {"elapsed_s", or_null(p.elapsed_s)},
          {"message", p.message},
          {"updated_at", p.updated_at}};
}

Status JobProgressWriter::set(const JobProgress& progress) {
  const JobId job = progress.job_id;
  return guard(db_, "set progress of job " + std::to_string(job), [&] {
    {
      Query known(db_, "SELECT 1 AS one FROM jobs WHERE id = :id");
      known->bind(":id", job);
      if (!known->step()) raise(ErrorCode::kNotFound, "job " + std::to_string(job) + ": no such job");
    }
    // The whole record goes into the detail; step and updated_at are also
    // columns (the dashboard's query filters and orders by them).
    const UnixSeconds now = db_.now();
    JobProgress stored = progress;
    stored.updated_at = now;
    Query q(db_,
            "INSERT INTO job_progress (job_id, step, detail_json, updated_at) VALUES (:job, :step, :detail, :now) "
            "ON CONFLICT (job_id) DO UPDATE SET step = excluded.step, detail_json = excluded.detail_json, "
            "  updated_at = excluded.updated_at");
    q->bind(":job", job).bind(":step", to_string(progress.step)).bind(":detail", to_json(stored)).bind(":now", now);
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
