// Experiments grouped by investigation (the API's GET
// /api/v1/investigations, `perfwatch query investigations`;
// schemas/api/investigations.schema.json): the users' question is "what did
// we learn about num_warps=8", not one card per commit that measured it.
//
// An investigation is
//   - the experiments of one Perf-Experiment id (kind "group"), or
//   - the variant A/Bs whose candidate changes the baseline's parameters the
//     same way ("num_warps=8", kind "params"), on every commit that
//     measured them, or
//   - an experiment alone (a manual one, a trailer without an id).
// Its current verdict is its newest experiment's verdict as people are told
// it (experiment_view.h, shown_verdict: never "no effect" while a point is
// undecided); its history is every experiment's, newest first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::views {

struct InvestigationsRequest {
  std::optional<store::RepoId> repo;
  std::string text;  // words that must all occur (as experiments' search)
  int limit = 50;    // investigations, newest first, 1..kInvestigationsLimitMax
};
inline constexpr int kInvestigationsLimitMax = 200;
// Experiments read to build them, newest first: older ones are left out.
inline constexpr int kInvestigationsExperimentsMax = 2000;

struct InvestigationStep {
  store::ExperimentId id = 0;
  std::string sha;  // the commit it measured ("" for none)
  store::UnixSeconds updated_at = 0;
  std::string verdict;        // as stored
  std::string shown_verdict;  // as people are told it
  std::string headline;       // its first headline
};

struct Investigation {
  std::string kind;   // "group", "params", "experiment"
  std::string key;    // "group:<id>", "params:<diff>", "experiment:<id>"
  std::string title;  // what people call it: the group id, "num_warps=8", the hypothesis
  std::string hypothesis;  // the newest experiment's
  std::string conclusion;  // the newest non-empty conclusion
  std::vector<InvestigationStep> history;  // newest first; history[0] is the current verdict
};

struct InvestigationsView {
  int limit = 0;
  bool has_more = false;
  bool truncated = false;  // more than kInvestigationsExperimentsMax experiments: the oldest left out
  std::vector<Investigation> investigations;
};

Result<InvestigationsView> investigations_view(store::Database& db, const InvestigationsRequest& request);
nlohmann::json investigations_document(const InvestigationsView& view);
// A block per investigation: its title, current verdict, and the verdicts before it.
std::string investigations_text(const InvestigationsView& view);

}  // namespace perfwatch::views
