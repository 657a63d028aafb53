// A page of a branch's first-parent history, newest first: each commit's
// job/build/run status, open flags and cost, optionally with its runs. One
// model, two printers: JSON (the API's GET /api/v1/commits, `perfwatch query
// runs --json`; schemas/api/commits.schema.json) and the runs table of
// `perfwatch query runs`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/history_store.h"

namespace perfwatch::views {

struct CommitsRequest {
  std::optional<store::RepoId> repo;     // default: the only repo
  std::optional<std::string> branch;     // default: views::resolve_branch's rule
  // Only this commit (sha or unique prefix): the page holds it alone, and
  // the branch is resolved only when named (else "" in the document).
  std::optional<std::string> commit;
  int limit = 50;                        // 1..kCommitsLimitMax
  int offset = 0;
  bool runs = false;                     // each commit with its own runs
};
inline constexpr int kCommitsLimitMax = 200;

struct CommitsEntry {
  store::CommitOverview overview;
  std::string inherited_from_sha;       // "" when it carries no other commit's results
  std::vector<store::RunRecord> runs;   // its own, oldest first (when asked for)
};

struct CommitsView {
  store::RepoId repo_id = 0;
  std::string branch;
  std::string head_sha;
  int limit = 0;
  int offset = 0;
  bool has_more = false;
  bool with_runs = false;
  std::vector<CommitsEntry> commits;
};

// kInvalidArgument "limit"/"offset" out of range; "repo", "branch" and
// "commit" as views::resolve_* say.
Result<CommitsView> commits_view(store::Database& db, const CommitsRequest& request);
nlohmann::json commits_document(const CommitsView& view);
// One line per run (commit, run, kind, status, trials, wall_s, purpose); a
// commit without runs says why (inherits, or no runs).
std::string runs_text(const CommitsView& view);

}  // namespace perfwatch::views
