// Runs and what they measured: testbeds, builds, runs, their variants, the
// sweep points, correctness checks and raw trials. The runner writes here as
// the bench's lines arrive; nothing already stored is lost when the bench or
// the runner dies later.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/manifest_facts.h"
#include "store/records.h"

namespace perfwatch::store {

class RunWriter {
 public:
  explicit RunWriter(Database& db) : db_(db) {}

  // The testbed with this name, created if absent. kInvalidArgument if the
  // name is known with another hostname, backend or device: noise bands are
  // per testbed, so a different machine needs a different name.
  Result<TestbedId> ensure_testbed(const TestbedRecord& testbed);

  Result<BuildId> add_build(const BuildRecord& build);

  // Stores a new run (never overwrites one: the same commit benchmarked
  // twice has two runs). started_at defaults to the store's clock when 0.
  Result<RunId> start_run(const RunRecord& run);

  // Stores what the bench header said, when it arrives: where the run ran
  // and its provenance.
  Status set_provenance(RunId run, std::optional<TestbedId> testbed, const nlohmann::json& provenance,
                        std::optional<std::int64_t> seed);

  // Where the executor put the run (RunRecord::placement), as learned:
  // `placement` is merged into what is stored.
  Status set_placement(RunId run, const nlohmann::json& placement, const std::string& device_uuid);

  // The variant line of a run. kInvalidArgument for a second variant of the
  // same name, or a second baseline, in one run.
  Result<VariantId> add_variant(const VariantRecord& variant);

  // The point with this key, created if absent. kInvalidArgument if the key
  // is known with other coordinates.
  Result<PointId> ensure_point(const PointRecord& point);

  // A check line (or a skipped line's status); replaces an earlier check of
  // the same run x variant x point.
  Status record_check(const CheckRecord& check);

  // One trial, committed (durable against a crash of this process) when this
  // returns, unless the caller holds a Transaction. Cheap: a cached statement,
  // one row. kInvalidArgument for a duplicate trial number or a variant that
  // is not the run's.
  Status insert_trial(const TrialRecord& trial);

  // Many trials in one transaction (all or none).
  Status insert_trials(std::span<const TrialRecord> trials);

  // Ends a run that is still `running`: status, exit, tails, wall time, and
  // the count of its stored trials. kInvalidArgument if it is not running
  // (e.g. already marked cut_off by the queue's crash recovery).
  Status finish_run(RunId run, const RunOutcome& outcome);

 private:
  Database& db_;
};

// One cell of a run's table: a variant at a point.
struct RunTableCell {
  VariantId variant_id = 0;
  PointId point_id = 0;
  std::optional<SummaryRecord> summary;          // of the run's judged metric
  std::map<std::string, SummaryRecord> metrics;  // every summarised metric by name, the judged one too
  std::optional<CheckRecord> check;
  std::int64_t trials = 0;  // stored trials of the cell
};

// A run's full table: variants x points (points in the order they were first
// stored: the sweep's). Cells exist where a check, a summary or a trial does.
struct RunTable {
  RunRecord run;
  std::vector<VariantRecord> variants;
  std::vector<PointRecord> points;
  std::vector<RunTableCell> cells;
};

// Two runs side by side at one variant (by name) x point, by their judged metric.
struct RunPairRow {
  std::string variant;
  PointRecord point;
  std::optional<SummaryRecord> a;
  std::optional<SummaryRecord> b;
  std::optional<double> ratio;  // b.median / a.median when both exist
};

class RunReader {
 public:
  explicit RunReader(Database& db) : db_(db) {}

  Result<std::vector<TestbedRecord>> testbeds();
  Result<TestbedRecord> testbed(TestbedId id);
  // The testbed of that name, if one has measured yet.
  Result<std::optional<TestbedRecord>> testbed_named(const std::string& name);

  Result<BuildRecord> build(BuildId id);
  Result<std::vector<BuildRecord>> builds_of_commit(CommitId commit);  // oldest first

  Result<RunRecord> run(RunId id);  // kNotFound if absent
  Result<std::vector<RunRecord>> runs_of_commit(CommitId commit);  // oldest first
  // What the run's stored manifest says (store/manifest_facts.h): kNotFound
  // for an unknown run, kInternal naming the field of a stored manifest
  // whose facts cannot be read (a damaged row).
  Result<ManifestFacts> manifest_facts(RunId run);
  // The facts of the newest run of `commit` that stored a manifest; the
  // defaults (manifest_version 0) when none did.
  Result<ManifestFacts> manifest_facts_of_commit(CommitId commit);
  // Trials stored so far (live, also while the run is running).
  Result<std::int64_t> trial_count(RunId run);

  Result<std::vector<VariantRecord>> variants(RunId run);
  Result<std::vector<PointRecord>> points();  // every point known
  Result<PointRecord> point(PointId id);
  Result<std::optional<PointRecord>> find_point(std::string_view key);

  Result<std::vector<CheckRecord>> checks(RunId run);
  // Raw trials of a run, optionally of one variant and/or point, in
  // (variant, point, trial_no) order.
  Result<std::vector<TrialRecord>> trials(RunId run, std::optional<VariantId> variant = std::nullopt,
                                          std::optional<PointId> point = std::nullopt);
  Result<std::vector<SummaryRecord>> summaries(RunId run);  // every metric's, (variant, point, metric) order

  Result<RunTable> table(RunId run);
  // Run a against run b: every variant name x point either has a summary of.
  Result<std::vector<RunPairRow>> compare_runs(RunId a, RunId b);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
