// What perfwatch recorded about a history, read from its database (read
// only, with SQLite's C API: this program tests perfwatch from outside, so it
// links none of perfwatch's store). The tables: schemas/sql/*.sql -- commits,
// runs, points, comparisons, flags.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/result.h"

namespace judging_e2e {

struct ObservedFlag {
  std::string sha;          // the commit it names
  std::string variant;
  int batch = 0;
  std::string kind;         // regression, improvement, changepoint
  double magnitude_rel = 0; // the change of time_us: > 0 slower
  std::string basis;        // detail.basis: previous, pinned ("" when absent)
  bool open = true;         // not withdrawn, nor acknowledged by a person (observed.cpp)
  int runs = -1;            // detail.runs, detail.against_runs: the evidence it was raised on (-1: absent)
  int against_runs = -1;
  std::string against_sha;  // detail.against
  std::string started_at;   // detail.started_at: where a drift flag says its slide started ("" when absent)
};

struct ObservedComparison {
  std::string sha, against_sha;
  std::string basis;        // previous, pinned
  std::string variant;
  int batch = 0;
  std::string verdict;
};

struct ObservedRuns {
  int rows = 0;  // every row of runs for the commit: all kinds, all statuses
  int ok = 0;    // status ok
};

struct Observed {
  std::map<std::string, ObservedRuns> runs;  // by commit sha
  // Per commit sha, variant and batch: the runs (status ok, kind not noise)
  // with a summary there -- the evidence a comparison of that cell can use now.
  std::map<std::tuple<std::string, std::string, int>, int> cell_runs;
  std::vector<ObservedComparison> comparisons;
  std::vector<ObservedFlag> flags;
};

perfwatch::Result<Observed> read_database(const std::filesystem::path& db);

}  // namespace judging_e2e
