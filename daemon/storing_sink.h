// A RunSink that stores what the bench reports as it arrives: the header as
// the run's provenance, variants, checks, every trial with all its metrics
// (committed one by one, so a crash later loses none), and each finished
// cell's summaries, one per metric (the judged one marked).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/manifest.h"
#include "runner/sweep.h"
#include "store/database.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

class StoringSink : public runner::RunSink {
 public:
  // `extra_provenance` is merged into the header (toolchain, recorded env...).
  // `testbed_name` and `testbed_host` are the executor's (executor.h,
  // Placement): empty, the testbed is "{host}/{backend}/{device}" of this host.
  StoringSink(store::Database& db, store::RunId run, const runner::Manifest& manifest,
              nlohmann::json extra_provenance, std::function<void(const runner::SweepProgress&)> progress,
              std::string testbed_name = "", std::string testbed_host = "");

  void on_header(const nlohmann::json& header) override;
  void on_variant(const nlohmann::json& line) override;
  void on_check(const runner::CheckLine& line) override;
  void on_trial(const runner::TrialLine& trial) override;
  void on_skipped(const runner::SkippedLine& line) override;
  void on_point_done(const std::string& variant, const runner::PointSpec& point, const std::vector<double>& values,
                     int dropped_throttled, analysis::StopReason reason) override;
  void on_progress(const runner::SweepProgress& progress) override;

  // Summarises the cells that have trials but never finished (the run ended
  // in the middle of them), with stop reason "run_ended". Call once, after the sweep.
  void summarise_unfinished();

  // The first store error, if any. The sweep ends at the next line
  // (failure()): a run whose trials cannot be kept must not drive the bench on.
  const Status& status() const { return status_; }
  std::optional<std::string> failure() const override;
  std::optional<store::TestbedId> testbed() const { return testbed_; }
  std::string backend() const { return backend_; }

 private:
  struct Cell {
    std::map<std::string, std::vector<double>> values;  // unthrottled trials' values, by metric
    int dropped_throttled = 0;
    bool summarised = false;
  };
  void keep(Status s);
  store::PointId point_id(const std::string& key);
  void summarise(const std::string& variant, const std::string& point, Cell& cell, const std::string& reason);

  store::Database& db_;
  store::RunWriter writer_;
  store::RunId run_;
  const runner::Manifest& manifest_;
  nlohmann::json extra_provenance_;
  std::function<void(const runner::SweepProgress&)> progress_;
  std::string testbed_name_, testbed_host_;
  std::map<std::string, const runner::PointSpec*> specs_;  // the manifest's points by key
  std::map<std::string, store::VariantId> variants_;
  std::map<std::string, store::PointId> points_;
  std::map<std::pair<std::string, std::string>, Cell> cells_;
  std::optional<store::TestbedId> testbed_;
  std::string backend_;
  Status status_;
};

// The statistics summary of a cell, in store form.
store::SummaryRecord make_summary(store::RunId run, store::VariantId variant, store::PointId point,
                                  const std::string& metric, const std::vector<double>& values,
                                  int dropped_throttled, const std::string& stop_reason);

}  // namespace perfwatch::daemon
