// Alert groups: the flags of one commit on one testbed, shown and triaged
// as one (the API's GET /api/v1/alert-groups, `perfwatch flags groups`;
// schemas/api/alert_groups.schema.json). One model, printed as JSON or text.
//
// A group's summary: its worst change (the largest regression, else the
// largest change, by size in log terms, so -20% and +25% weigh the same),
// where it is (variant and point label), how many cells (variant x point)
// it holds, which kinds of flags, how many are still open, and its triage
// (store/alert_group_store.h) with the commit it is linked to.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/analysis_store.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::views {

struct AlertGroupsRequest {
  std::optional<store::RepoId> repo;        // default: the only repo
  std::string state = "open";               // "open" (a flag still open), "closed", "any"
  std::optional<store::TestbedId> testbed;  // only this testbed's groups
  std::optional<std::string> commit;        // only this commit's (a sha or prefix)
  int limit = 50;                           // newest commit first, 1..kAlertGroupsLimitMax
};
inline constexpr int kAlertGroupsLimitMax = 500;

struct AlertGroup {
  store::CommitId commit_id = 0;
  std::string sha, subject;
  store::TestbedId testbed_id = 0;
  std::string testbed;  // its name
  std::vector<store::FlagView> flags;  // standing ones (withdrawn flags are no part of a group)
  int open = 0;                        // flags neither acknowledged nor withdrawn
  std::size_t worst = 0;               // index into flags
  std::set<std::string> kinds;
  std::set<std::pair<std::string, store::PointId>> cells;
  std::optional<store::GroupTriageRecord> triage;
  std::string linked_sha;              // the triage's linked commit ("" when none)
  // "open" while a flag is open; else the triage's word, or "acknowledged"
  // when its flags were acknowledged one by one.
  std::string state;
};

struct AlertGroupsView {
  std::string state;
  int limit = 0;
  bool has_more = false;
  std::vector<AlertGroup> groups;
  std::map<store::PointId, std::string> labels;
};

// kInvalidArgument "state" / "limit"; "commit" and "repo" as views::resolve_* say.
Result<AlertGroupsView> alert_groups_view(store::Database& db, const AlertGroupsRequest& request);
nlohmann::json alert_groups_document(const AlertGroupsView& view);
// A line per group: commit, testbed, state, worst change and where, cells, kinds, subject.
std::string alert_groups_text(const AlertGroupsView& view);

// A group as people name it: a commit (sha or prefix) of `repo` and,
// where its flags stand on several testbeds, the testbed (a name or an id).
// kNotFound "commit" when the commit has no standing flag; kInvalidArgument
// "testbed" when it is needed or unknown, listing the testbeds the commit
// has flags on.
struct GroupKey {
  store::CommitRecord commit;
  store::TestbedId testbed = 0;
};
Result<GroupKey> resolve_group(store::Database& db, std::optional<store::RepoId> repo, std::string_view sha,
                               const std::optional<std::string>& testbed);

// The words a person triages with: "ack" / "acknowledged", "invalid",
// "expected" (recovered and recovery are judging's). nullopt otherwise.
std::optional<store::GroupTriage> parse_person_triage(std::string_view word);

}  // namespace perfwatch::views
