// The live progress of the daemon's jobs, for the dashboard: what a running
// job is doing now -- its step, which commit it builds or runs, run i of n,
// point i of n, the variant, trials, elapsed time, the run's purpose. One row
// per job (schemas/sql/003_daemon.sql), overwritten as the job goes, kept
// after it ends.
//
// A typed record with a JSON form (schemas/store/job_progress.schema.json):
// the daemon writes it through JobProgressWriter::set, every reader gets it
// through JobProgressReader. Rows written before the record was typed (a
// free JSON detail with the same words) read as the same record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/ids.h"
#include "store/records.h"

namespace perfwatch::store {

// Where a job is: claimed, then build / run (repeated) and analyse, then how
// it ended (the words of JobState: done, failed, skipped, cut_off).
enum class JobStep { kClaimed, kBuild, kRun, kAnalyse, kDone, kFailed, kSkipped, kCutOff };
std::string_view to_string(JobStep step);  // "claimed", "build", "run", "analyse", "done", ...
std::optional<JobStep> parse_job_step(std::string_view word);
// The step that says how a job ended (done, failed, skipped, cut_off);
// nullopt for queued and running, which are not ends.
std::optional<JobStep> final_step(JobState state);

struct JobProgress {
  JobId job_id = 0;
  JobStep step = JobStep::kClaimed;
  std::string commit;     // the job's commit (full sha)
  // The commit being built or run now: the job's own, the previous one (A B
  // A B re-runs) or the pinned baseline. "" when nothing is.
  std::string measuring;
  std::optional<RunKind> run_kind;      // of the run being made
  std::string purpose;                  // "run 2 of 3 of 3f2a9c1e05 (2 of 6 points)"
  std::optional<int> run;               // run i of runs_planned (1-based)
  std::optional<int> runs_planned;
  std::optional<int> point_index;       // point i of points (1-based), in the run being made
  std::optional<int> points;
  std::string point;                    // its key
  std::string variant;                  // the variant measured now
  std::optional<std::int64_t> trials;   // of that variant at that point so far
  std::optional<double> elapsed_s;      // since the run started
  std::string message;                  // how the job ended (final steps)
  UnixSeconds updated_at = 0;           // the store's clock, on set

  friend bool operator==(const JobProgress&, const JobProgress&) = default;
};

// The version of the record's JSON form.
inline constexpr int kJobProgressSchemaVersion = 1;

// The JSON form (schemas/store/job_progress.schema.json): every field, absent
// values as null.
nlohmann::json to_json(const JobProgress& progress);

class JobProgressWriter {
 public:
  explicit JobProgressWriter(Database& db) : db_(db) {}
  // Replaces the progress of progress.job_id (updated_at: the store's clock).
  // kNotFound for an unknown job.
  Status set(const JobProgress& progress);

 private:
  Database& db_;
};

class JobProgressReader {
 public:
  explicit JobProgressReader(Database& db) : db_(db) {}
  // nullopt when the job never reported. A stored detail that is not the
  // record (a field of the wrong type) is kInternal naming the field.
  Result<std::optional<JobProgress>> progress(JobId job);
  // The progress of every job that is running now, oldest job first.
  Result<std::vector<JobProgress>> running();

 private:
  Database& db_;
};

}  // namespace perfwatch::store
