// Recoveries: a later commit that undoes an open regression closes its
// alert group as "recovered at <commit>", and the two groups are linked.
//
// The rule (the same for a revert and for a fix):
//   - the earlier group (commit R, one testbed) has open flags, at least
//     one of them a regression;
//   - a later commit F -- R is a first-parent ancestor of F -- holds a
//     standing flag in the opposite direction at every cell (variant x
//     point) where R has an open flag;
//   - each of them is about the same size: F's change undoes between half
//     and twice R's, in log terms (kUndoLow..kUndoHigh), so a 20% slowdown
//     is undone by a 10..36% speed-up of the same cells; a small partial fix
//     leaves the group open.
// Then R's group is triaged `recovered` (linked to F) and F's matching
// flags `recovery` (linked to R), acknowledging them; F's other flags stay
// open. Deciding is a pure function over flags; applying it reads and
// writes the store (no git: ancestry is read from the stored commits).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::judge {

inline constexpr double kUndoLow = 0.5;
inline constexpr double kUndoHigh = 2.0;

struct Recovery {
  store::CommitId regressed = 0;     // R: the group that was undone
  store::CommitId recovered_at = 0;  // F: the commit that undid it
  store::TestbedId testbed = 0;
  std::vector<store::FlagId> undone;    // R's flags
  std::vector<store::FlagId> undoing;   // F's flags that undo them
  std::string regressed_sha, recovered_at_sha;
};

// Pure: whether the flags `later` (of one later commit) undo the group
// `group` (flags of one earlier commit, same testbed), as the header says.
// Only open flags of `group` and standing flags of `later` count. Fills
// the flag ids of the result; commits, testbed and shas are the caller's.
std::optional<Recovery> match_recovery(std::span<const store::FlagRecord> group,
                                       std::span<const store::FlagRecord> later);

// Looks for the open groups on `testbed` that commit `later` undoes (its
// first-parent ancestors within `reach` commits), and triages each pair as
// the header says. Returns what it closed.
Result<std::vector<Recovery>> close_recovered_groups(store::Database& db, store::RepoId repo,
                                                     const store::CommitRecord& later, store::TestbedId testbed,
                                                     int reach = 1000);

}  // namespace perfwatch::judge
