// Test helpers for the store: a temporary database file that cleans up after
// itself, and a small seeded history built through the real API.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>

#include "store/analysis_store.h"
#include "store/database.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::store::testing {

// Unwraps a Result in a test, failing with the error's text.
#define PW_ASSERT_OK(expr)                                                 \
  do {                                                                     \
    auto&& pw_result_ = (expr);                                            \
    ASSERT_TRUE(pw_result_.has_value()) << pw_result_.error().to_string(); \
  } while (0)
#define PW_UNWRAP(var, expr)                                                     \
  auto var##_result_ = (expr);                                                   \
  ASSERT_TRUE(var##_result_.has_value()) << var##_result_.error().to_string(); \
  auto var = std::move(*var##_result_)

// A unique database path in the temp directory; the file and its -wal/-shm
// companions are removed on destruction.
class TempDbPath {
 public:
  TempDbPath() {
    static std::atomic<int> counter{0};
    auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::temp_directory_path() /
            ("perfwatch_store_test_" + std::to_string(getpid()) + "_" + std::to_string(stamp) + "_" +
             std::to_string(counter++) + ".db");
  }
  ~TempDbPath() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(path_.string() + suffix, ec);
  }
  TempDbPath(const TempDbPath&) = delete;
  TempDbPath& operator=(const TempDbPath&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs SQL through a second, raw connection: a database as an older
// perfwatch left it, written without the store's current columns.
inline void raw_exec(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  const std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

inline std::string sha_of(int i) {
  char buffer[41];
  std::snprintf(buffer, sizeof buffer, "%040x", 0xc0de0000 + i);
  return buffer;
}

// A point of one axis, "batch" (the canonical key of {"batch": N}).
inline PointRecord point_record(int batch) {
  PointRecord p;
  p.key = "batch=" + std::to_string(batch);
  p.label = "C" + std::to_string(batch);
  p.axes = {{"batch", batch}};
  return p;
}

inline TrialRecord trial_record(RunId run, VariantId variant, PointId point, int no, double time_us) {
  TrialRecord t;
  t.run_id = run;
  t.variant_id = variant;
  t.point_id = point;
  t.trial_no = no;
  t.metrics = {{"time_us", time_us}, {"tokens_per_s", 1e6 / time_us}};
  t.steps = 10;
  t.throttled = false;
  return t;
}

}  // namespace perfwatch::store::testing
