#include "benchmarks/judging_e2e/history.h"

#include <algorithm>
#include <cstdio>
#include <random>

namespace judging_e2e {

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kStep: return "step";
    case EventKind::kBlip: return "blip";
    case EventKind::kDrift: return "drift";
  }
  return "?";
}

bool History::changed(int commit, int cell) const {
  return commit > 0 && time_us[commit][cell] != time_us[commit - 1][cell];
}

std::vector<int> default_batches() { return {1, 8, 64}; }

std::vector<Cell> default_cells() {
  std::vector<Cell> cells;
  for (const char* variant : {"base", "alt"})
    for (int batch : default_batches()) cells.push_back({variant, batch});
  return cells;
}

namespace {

int span(EventKind kind, const HistoryShape& shape) {
  switch (kind) {
    case EventKind::kStep: return 1;
    case EventKind::kBlip: return 2;  // up, then back
    case EventKind::kDrift: return shape.drift_commits;
  }
  return 1;
}

// Which events fit, in the order of dropping: drift first, then steps down to
// one, then the blip.
std::vector<EventKind> fitting_events(const HistoryShape& shape) {
  bool drift = shape.drift_commits > 0;
  bool blip = true;
  int steps = std::max(shape.steps, 1);
  auto needed = [&] {
    int n = shape.first_event;
    if (drift) n += shape.drift_commits + shape.min_gap;
    if (blip) n += 2 + shape.min_gap;
    return n + steps * (1 + shape.min_gap);
  };
  while (needed() > shape.commits) {
    if (drift) drift = false;
    else if (steps > 1) --steps;
    else if (blip) blip = false;
    else break;
  }
  std::vector<EventKind> kinds;
  if (drift) kinds.push_back(EventKind::kDrift);
  if (blip) kinds.push_back(EventKind::kBlip);
  for (int i = 0; i < steps; ++i) kinds.push_back(EventKind::kStep);
  return kinds;
}

// A random subset of the cells with at least one cell in it and, when
// `leave_one_out`, at least one left out (so the commit has unchanged cells too).
std::vector<int> some_cells(int n, bool leave_one_out, std::mt19937_64& rng) {
  std::bernoulli_distribution coin(0.5);
  for (;;) {
    std::vector<int> out;
    for (int c = 0; c < n; ++c)
      if (coin(rng)) out.push_back(c);
    if (!out.empty() && (!leave_one_out || static_cast<int>(out.size()) < n)) return out;
  }
}

}  // namespace

History generate_history(const HistoryShape& shape, double run_noise, double trial_noise, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  History h;
  h.cells = default_cells();
  h.run_noise = run_noise;
  h.trial_noise = trial_noise;
  const int n_cells = static_cast<int>(h.cells.size());

  auto kinds = fitting_events(shape);
  std::shuffle(kinds.begin(), kinds.end(), rng);
  int needed = shape.first_event;
  for (auto k : kinds) needed += span(k, shape) + shape.min_gap;
  // The spare commits go into the gaps at random: gap 0 is before the first
  // event, gap k after event k.
  std::vector<int> extra(kinds.size() + 1, 0);
  std::uniform_int_distribution<size_t> gap(0, kinds.size());
  for (int spare = std::max(shape.commits - needed, 0); spare > 0; --spare) ++extra[gap(rng)];

  std::bernoulli_distribution sign(0.5);
  int at = shape.first_event + extra[0];
  for (size_t i = 0; i < kinds.size(); ++i) {
    Event e;
    e.kind = kinds[i];
    e.commit = at;
    e.length = span(kinds[i], shape);
    switch (e.kind) {
      case EventKind::kStep:
        e.cells = some_cells(n_cells, true, rng);
        for (size_t c = 0; c < e.cells.size(); ++c) e.rel.push_back(sign(rng) ? shape.step_rel : -shape.step_rel);
        break;
      case EventKind::kBlip:
        e.cells = some_cells(n_cells, true, rng);
        e.rel.assign(e.cells.size(), shape.blip_rel);
        break;
      case EventKind::kDrift:
        for (int c = 0; c < n_cells; ++c) e.cells.push_back(c);
        e.rel.assign(e.cells.size(), shape.drift_rel_per_commit);
        break;
    }
    h.events.push_back(e);
    at += e.length + shape.min_gap + extra[i + 1];
  }

  // Small times: perfwatch does not care about their size, only their ratios.
  std::vector<double> first;
  for (const auto& cell : h.cells) first.push_back((20.0 + 0.5 * cell.batch) * (cell.variant == "base" ? 1.0 : 0.92));
  h.time_us.assign(shape.commits, first);
  for (int i = 1; i < shape.commits; ++i) {
    h.time_us[i] = h.time_us[i - 1];
    for (const auto& e : h.events) {
      for (size_t k = 0; k < e.cells.size(); ++k) {
        const int c = e.cells[k];
        const bool moves = e.kind == EventKind::kBlip ? i == e.commit : (i >= e.commit && i < e.commit + e.length);
        if (moves) h.time_us[i][c] *= 1.0 + e.rel[k];
        // Back exactly where it was, so the commit after is unchanged.
        if (e.kind == EventKind::kBlip && i == e.commit + 1) h.time_us[i][c] = h.time_us[e.commit - 1][c];
      }
    }
  }
  return h;
}

nlohmann::json truth_document(const History& history, int commit) {
  nlohmann::json cells = nlohmann::json::array();
  for (size_t c = 0; c < history.cells.size(); ++c)
    cells.push_back({{"variant", history.cells[c].variant},
                     {"batch", history.cells[c].batch},
                     {"time_us", history.time_us[commit][c]}});
  return {{"schema", "judging_e2e truth 1"},
          {"commit", commit},
          {"run_noise", history.run_noise},
          {"trial_noise", history.trial_noise},
          {"cells", cells}};
}

std::string describe_commit(const History& history, int commit) {
  std::string out;
  for (const auto& e : history.events) {
    const bool here = e.kind == EventKind::kBlip ? (commit == e.commit || commit == e.commit + 1)
                                                 : (commit >= e.commit && commit < e.commit + e.length);
    if (!here) continue;
    if (!out.empty()) out += "; ";
    out += to_string(e.kind);
    if (e.kind == EventKind::kBlip && commit == e.commit + 1) out += " back";
    if (e.kind == EventKind::kDrift) out += " " + std::to_string(commit - e.commit + 1) + "/" + std::to_string(e.length);
    for (size_t k = 0; k < e.cells.size(); ++k) {
      const auto& cell = history.cells[e.cells[k]];
      char buf[96];
      double rel = e.kind == EventKind::kBlip && commit == e.commit + 1 ? -e.rel[k] : e.rel[k];
      std::snprintf(buf, sizeof buf, " %s@b%d %+.1f%%", cell.variant.c_str(), cell.batch, 100 * rel);
      out += buf;
    }
  }
  return out.empty() ? "unchanged" : out;
}

}  // namespace judging_e2e
