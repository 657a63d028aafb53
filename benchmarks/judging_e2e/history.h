// A synthetic history with known truth: per commit and per cell (variant x
// batch) the true time of one decode step, and the events that moved it --
// 5% steps, a one-commit blip, a slow drift -- with unchanged stretches
// between them. What perfwatch is asked to find, written down before it looks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace judging_e2e {

// One thing perfwatch judges separately: a variant at a batch size.
struct Cell {
  std::string variant;
  int batch = 1;
};

enum class EventKind { kStep, kBlip, kDrift };
const char* to_string(EventKind kind);

// A change of the truth. A step moves its cells by `rel` at `commit` and
// stays; a blip moves them by `rel` at `commit` and back at commit + 1; a
// drift moves them by `rel` at each of `length` commits from `commit` on.
struct Event {
  EventKind kind = EventKind::kStep;
  int commit = 0;                 // index in the history, 0 = the first commit
  int length = 1;                 // commits the event changes (drift: its length)
  std::vector<int> cells;         // indices into History::cells
  std::vector<double> rel;        // per cell in `cells`: +0.05 = 5% slower
};

// What the generator is asked for. Events that do not fit into `commits`
// are dropped (drift first, then steps down to one, then the blip), so a
// short history for a smoke check still has a step.
struct HistoryShape {
  int commits = 60;
  int steps = 5;
  double step_rel = 0.05;          // size of a step; its sign is drawn per cell
  double blip_rel = 0.05;
  int drift_commits = 12;
  double drift_rel_per_commit = 0.005;  // +0.5% a commit, 1.005^12 = +6.2% in all
  int first_event = 8;             // the band needs a few commits of history first
  int min_gap = 4;                 // unchanged commits after each event, at least
};

struct History {
  std::vector<Cell> cells;
  std::vector<std::vector<double>> time_us;  // [commit][cell]
  std::vector<Event> events;
  double run_noise = 0;     // sigma of the lognormal per-process factor
  double trial_noise = 0;   // sigma of the lognormal per-trial factor

  int commits() const { return static_cast<int>(time_us.size()); }
  // Whether cell's truth at `commit` differs from its parent's.
  bool changed(int commit, int cell) const;
};

// The cells of every history: 2 variants x these batch sizes.
std::vector<Cell> default_cells();
std::vector<int> default_batches();

History generate_history(const HistoryShape& shape, double run_noise, double trial_noise, std::uint64_t seed);

// truth.json of one commit, as the synthetic bench reads it:
// {"schema": "judging_e2e truth 1", "commit": i, "run_noise": s, "trial_noise": t,
//  "cells": [{"variant": "base", "batch": 1, "time_us": 20.5}, ...]}
nlohmann::json truth_document(const History& history, int commit);

// A one-line account of what commit `commit` changes, for its message.
std::string describe_commit(const History& history, int commit);

}  // namespace judging_e2e
