// One cell's measured history as the looks over it (drift, located steps)
// read it: the measured commits of the window, oldest first, each with its
// run medians and its newest standing flag. Inheriting commits repeat their
// parent's runs and would fake a plateau, so they are left out.
#pragma once

#include <cstddef>
#include <vector>

#include "common/result.h"
#include "judge/commit_runs.h"
#include "store/database.h"
#include "store/history_store.h"

namespace perfwatch::judge {

class CellHistory {
 public:
  static Result<CellHistory> read(store::Database& db, const HistoryScope& scope, const Cell& cell,
                                  PointNames& names);

  // measured() points into its own entries: a move keeps them, a copy would not.
  CellHistory() = default;
  CellHistory(CellHistory&&) = default;
  CellHistory& operator=(CellHistory&&) = default;
  CellHistory(const CellHistory&) = delete;
  CellHistory& operator=(const CellHistory&) = delete;

  const std::vector<const store::HistoryEntry*>& measured() const { return measured_; }
  // Whether the newest measured commit is the head (else the head was not measured here).
  bool ends_at(store::CommitId head) const { return !measured_.empty() && measured_.back()->commit_id == head; }

  static std::vector<double> medians(const store::HistoryEntry& e);
  // medians() of measured()[from, to).
  std::vector<std::vector<double>> medians(std::size_t from, std::size_t to) const;

  // The index of the commit where the slide over measured()[from..] started
  // (analysis/drift.h's hinge fit over the pooled values).
  std::size_t slide_start(std::size_t from) const;

 private:
  store::PointHistory history_;
  std::vector<const store::HistoryEntry*> measured_;
};

}  // namespace perfwatch::judge
