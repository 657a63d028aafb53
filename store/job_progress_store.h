// The live progress of the daemon's jobs (schemas/sql/003_daemon.sql), for
// the dashboard: what a running job is doing now -- its step ("build",
// "run", "analyse") and a JSON detail (run 2 of 3, point 4 of 6, trials...).
// One row per job, overwritten as the job goes, kept after it ends.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/ids.h"

namespace perfwatch::store {

struct JobProgress {
  JobId job_id = 0;
  std::string step;  // "claimed", "build", "run", "analyse", "done", ...
  nlohmann::json detail = nlohmann::json::object();
  UnixSeconds updated_at = 0;
};

class JobProgressWriter {
 public:
  explicit JobProgressWriter(Database& db) : db_(db) {}
  // Replaces the job's progress. kNotFound for an unknown job.
  Status set(JobId job, std::string_view step, const nlohmann::json& detail);

 private:
  Database& db_;
};

class JobProgressReader {
 public:
  explicit JobProgressReader(Database& db) : db_(db) {}
  Result<std::optional<JobProgress>> progress(JobId job);
  // The progress of every job that is running now, oldest job first.
  Result<std::vector<JobProgress>> running();

 private:
  Database& db_;
};

}  // namespace perfwatch::store
