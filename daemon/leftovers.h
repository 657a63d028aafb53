// What a perfwatch killed with -9 left behind on this machine: process groups
// (a build, a bench and what they started) and runs still marked running.
// The next perfwatch to start (watch, bench) ends the groups -- SIGTERM, then
// SIGKILL after a grace period, only processes that are provably the ones
// started (runner/process_groups.h) -- and cuts the runs off. Nothing whose
// owner still lives is touched.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "runner/process.h"
#include "store/database.h"
#include "store/ids.h"
#include "store/process_store.h"

namespace perfwatch::daemon {

// This process, as the store records owners.
store::ProcessOwner this_process();

struct Leftovers {
  struct Group {
    store::ChildGroupRecord record;
    runner::Leftover what;  // gone, ended, or not_ours (a recycled pid: left alone)
  };
  std::vector<Group> groups;
  std::vector<store::RunId> runs_cut_off;
};

// Ends the recorded groups of dead owners on this host (a group recorded on
// an earlier boot is just forgotten), then cuts off their runs.
Result<Leftovers> end_leftovers(store::Database& db, double grace_s = 2);

// A ChildWatch that records a child's group in the store while it runs (the
// record is best effort: a full disk must not stop a build) and passes a
// stop request on.
runner::ChildWatch recording_watch(store::Database& db, std::string what, std::optional<store::RunId> run,
                                   const std::atomic<bool>* stop);

}  // namespace perfwatch::daemon
