// A watched repo for the daemon's tests: a real git repository whose
// commits carry a perfwatch.json that runs the fast protocol-speaking fake
// bench (tests/runner/fake_bench.cpp), a temporary database and state
// folder, and the daemon run in-process with its log captured.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/context.h"
#include "daemon/event_log.h"
#include "daemon/watcher.h"
#include "store/analysis_store.h"
#include "store/database.h"
#include "store/experiment_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "tests/support/git_fixture.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::daemon::testing {

#define PW_ASSERT_OK(expr)                                                 \
  do {                                                                     \
    auto&& pw_result_ = (expr);                                            \
    ASSERT_TRUE(pw_result_.has_value()) << pw_result_.error().to_string(); \
  } while (0)

// The fake bench with a per-process random slow-down of variant `base` in
// [factor, factor * (1 + spread)): run-to-run noise, when a test needs it.
std::string noisy_fake_bench(double factor, double spread);

class DaemonTest : public ::testing::Test {
 protected:
  DaemonTest();

  // A manifest running the fake bench: variants base (baseline) and wide,
  // batches 1 and 8, 3 trials a point, runs.per_commit = 3.
  static nlohmann::json fake_manifest();
  // Commits perfwatch.json = `manifest` (plus `files`) with `message`.
  std::string commit(const nlohmann::json& manifest, const std::string& message,
                     std::map<std::string, std::string> files = {});

  WatchOptions options(bool once = true) const;
  // Opens a watcher on the repo (the options are kept alive by the test).
  std::unique_ptr<Watcher> open_watcher(const WatchOptions& options);
  // `perfwatch watch --once` in-process; fails the test on an error.
  void watch_once(WatchOptions options);

  // Reads.
  store::CommitRecord commit_record(const std::string& sha);
  std::vector<store::RunRecord> runs_of(const std::string& sha);
  std::vector<store::JobRecord> jobs_of(const std::string& sha);
  std::vector<store::FlagView> flags(std::optional<store::FlagKind> kind = std::nullopt);
  std::vector<store::ExperimentRecord> experiments(const store::ExperimentFilter& filter = {});
  bool logged(const std::string& text) const;
  std::string log_text() const;

  perfwatch::testing::GitFixture repo_;
  perfwatch::testing::TempDir state_{"perfwatch-daemon-state"};
  std::unique_ptr<store::Database> db_;
  std::vector<std::string> log_lines_;
  EventLog log_;
  std::vector<std::unique_ptr<WatchOptions>> kept_options_;
};

}  // namespace perfwatch::daemon::testing
