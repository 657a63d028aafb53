// A perfwatch database filled through the real store code, for the web
// server's tests, its browser test and its benchmark.
//
// The story (spec.story): a branch "main" of `commits` commits, each measured
// in runs_per_commit runs of every variant at every point (trials from a
// seeded model: run-to-run noise 1%, trial noise 0.5%), summarised with
// analysis::summarize, pooled per commit; the 5th commit slows every point
// down by 12% (flagged as a regression), the 6th carries the hostile message
// "<script>alert(1)</script>", the 7th is docs-only (inherits the 6th's
// results), the 8th reverts the slowdown (flagged as an improvement, one
// flag acknowledged), the last is being measured (a running job with a
// running run and some trials). Every commit gets comparisons with the
// previous measured one, and automatic experiments for its non-baseline
// variants (bt32_w8_s3 is slower everywhere: rejected); plus a manual
// negative result ("num_stages=3") and a trailer experiment whose
// hypothesis is markup.
//
// Without the story (benchmarks): the same measured history, no special
// commits, no jobs, no experiments.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/ids.h"

namespace perfwatch::web::testing {

struct FixtureSpec {
  int commits = 12;
  int runs_per_commit = 3;
  int trials_per_cell = 5;
  std::vector<std::int64_t> batches = {1, 8, 48, 64, 80, 96};
  // The first is the baseline.
  std::vector<std::string> variants = {"bt32_w4_s2", "bt64_w4_s2", "bt32_w8_s3"};
  bool story = true;
  bool comparisons = true;  // comparisons and flags between consecutive measured commits
  // A second testbed ("fixture-gpu", measured before the first, so the first
  // stays every page's default) that runs every measured commit too, faster,
  // where the story's slowdown does not happen: a one-testbed regression.
  bool second_testbed = false;
  std::uint64_t seed = 1;
  // Progress lines on stderr (large fixtures).
  bool verbose = false;
};

inline constexpr const char* kHostileSubject = "<script>alert(1)</script>";

struct FixtureInfo {
  store::RepoId repo_id = 0;
  std::string branch = "main";
  std::vector<std::string> shas;  // oldest first
  std::string regression_sha, hostile_sha, docs_sha, revert_sha, running_sha;
  std::string baseline_variant;
  std::vector<std::string> variants;
  std::vector<std::string> point_keys;
  store::FlagId regression_flag = 0;    // open: baseline variant, first point, regression_sha
  store::FlagId acknowledged_flag = 0;  // at revert_sha
  store::ExperimentId rejected_experiment = 0;  // bt32_w8_s3 at the head's measured commit
  store::ExperimentId manual_experiment = 0;
  store::RunId running_run = 0;
  store::JobId given_up_job = 0;  // a noise job of hostile_sha, cut off three times: gave_up
  std::vector<store::RunId> ok_runs;
  std::vector<store::TestbedId> testbeds;  // the first is the story's; the second, when asked for
  std::int64_t trials = 0;

  nlohmann::json to_json() const;
};

// Creates `db` (it must not exist) and fills it. Deterministic for a spec.
Result<FixtureInfo> build_fixture(const std::filesystem::path& db, const FixtureSpec& spec = {});

}  // namespace perfwatch::web::testing
