#include "judge/recoveries.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "judge/flags.h"
#include "store/alert_group_store.h"
#include "store/analysis_store.h"
#include "store/repo_store.h"

namespace perfwatch::judge {

namespace {

bool open(const store::FlagRecord& f) { return f.standing() && !f.acknowledged; }

// log(1 + m): a change and its undoing add up to zero in these terms.
double log_change(const store::FlagRecord& f) { return std::log1p(f.magnitude_rel); }

}  // namespace

std::optional<Recovery> match_recovery(std::span<const store::FlagRecord> group,
                                       std::span<const store::FlagRecord> later) {
  std::map<std::pair<std::string, store::PointId>, const store::FlagRecord*> undoers;
  for (const auto& f : later) {
    if (f.standing() && !flag_verdict(f).empty()) undoers[{f.variant, f.point_id}] = &f;
  }
  Recovery out;
  bool regression = false;
  for (const auto& f : group) {
    if (!open(f)) continue;
    const std::string said = flag_verdict(f);
    if (said.empty()) return std::nullopt;  // a flag with no direction cannot be undone
    regression = regression || said == "regression";
    auto it = undoers.find({f.variant, f.point_id});
    if (it == undoers.end()) return std::nullopt;
    const store::FlagRecord& u = *it->second;
    if (flag_verdict(u) == said) return std::nullopt;
    const double step = log_change(f);
    if (step == 0) return std::nullopt;
    const double undone = -log_change(u) / step;  // 1: exactly undone
    if (!(undone >= kUndoLow && undone <= kUndoHigh)) return std::nullopt;
    out.undone.push_back(f.id);
    out.undoing.push_back(u.id);
  }
  if (!regression || out.undone.empty()) return std::nullopt;
  return out;
}

namespace {

Result<std::vector<store::FlagRecord>> flags_of(store::Database& db, const store::FlagFilter& filter) {
  auto views = store::AnalysisReader(db).flags(filter);
  if (!views) return fail(views.error());
  std::vector<store::FlagRecord> out;
  for (auto& v : *views) out.push_back(std::move(v.flag));
  return out;
}

}  // namespace

Result<std::vector<Recovery>> close_recovered_groups(store::Database& db, store::RepoId repo,
                                                     const store::CommitRecord& later, store::TestbedId testbed,
                                                     int reach) {
  std::vector<Recovery> out;
  store::FlagFilter mine;
  mine.commit_id = later.id;
  mine.testbed_id = testbed;
  mine.limit = 100000;
  auto later_flags = flags_of(db, mine);
  if (!later_flags) return fail(later_flags.error());
  if (later_flags->empty()) return out;

  // The open groups on this testbed, by commit.
  store::FlagFilter open_filter;
  open_filter.repo_id = repo;
  open_filter.testbed_id = testbed;
  open_filter.state = store::FlagState::kOpen;
  open_filter.limit = 100000;
  auto open_flags = flags_of(db, open_filter);
  if (!open_flags) return fail(open_flags.error());
  std::map<store::CommitId, bool> open_groups;
  for (const auto& f : *open_flags)
    if (f.commit_id != later.id) open_groups[f.commit_id] = true;
  if (open_groups.empty()) return out;

  // Walk the first-parent ancestors; the nearest undone group is closed first.
  store::RepoReader repos(db);
  std::string sha = later.parent_sha;
  for (int i = 0; i < reach && !sha.empty() && !open_groups.empty(); ++i) {
    auto ancestor = repos.find_commit(repo, sha);
    if (!ancestor) return fail(ancestor.error());
    if (!*ancestor) break;
    const store::CommitRecord& r = **ancestor;
    sha = r.parent_sha;
    if (!open_groups.erase(r.id)) continue;
    store::FlagFilter theirs = mine;
    theirs.commit_id = r.id;
    auto group = flags_of(db, theirs);
    if (!group) return fail(group.error());
    auto undone = match_recovery(*group, *later_flags);
    if (!undone) continue;
    undone->regressed = r.id;
    undone->recovered_at = later.id;
    undone->testbed = testbed;
    undone->regressed_sha = r.sha;
    undone->recovered_at_sha = later.sha;
    store::AlertGroupWriter writer(db);
    const std::string short_later = later.sha.substr(0, 10), short_r = r.sha.substr(0, 10);
    store::GroupTriageRecord closed{r.id, testbed, store::GroupTriage::kRecovered,
                                    "recovered at " + short_later + ": the same cells changed back by about as much",
                                    "judge", 0, later.id};
    if (auto s = writer.triage(closed, std::span<const store::FlagId>(undone->undone)); !s) return fail(s.error());
    store::GroupTriageRecord undoing{later.id, testbed, store::GroupTriage::kRecovery,
                                     "undoes the change at " + short_r, "judge", 0, r.id};
    if (auto s = writer.triage(undoing, std::span<const store::FlagId>(undone->undoing)); !s) return fail(s.error());
    // The undoing flags are spent: one fix closes one group.
    std::vector<store::FlagRecord> rest;
    for (auto& f : *later_flags)
      if (std::find(undone->undoing.begin(), undone->undoing.end(), f.id) == undone->undoing.end())
        rest.push_back(std::move(f));
    *later_flags = std::move(rest);
    out.push_back(std::move(*undone));
  }
  return out;
}

}  // namespace perfwatch::judge
