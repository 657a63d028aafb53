// Who owns what is running: the process that runs a run, and the process
// groups perfwatch started (builds, benches). A perfwatch killed with -9
// leaves both behind; the next one to start finds them here, ends the groups
// (runner/process_groups.h) and cuts the runs off -- only where the owner is
// known to be dead, never a live process's work.
//
// A process is named by pid, start time since boot, boot id and host: a
// recycled pid, or a reboot, does not make a dead owner look alive.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/ids.h"

namespace perfwatch::store {

struct ProcessOwner {
  int pid = 0;
  std::uint64_t start_ticks = 0;
  std::string boot_id;
  std::string host;
  friend bool operator==(const ProcessOwner&, const ProcessOwner&) = default;
};

// A process group perfwatch started, while it runs.
struct ChildGroupRecord {
  std::int64_t id = 0;
  int pgid = 0;                    // the leader's pid
  std::uint64_t start_ticks = 0;   // the leader's start time
  ProcessOwner owner;              // the perfwatch that started it (boot_id, host: the group's too)
  std::string what;                // "build of 3f2a9c1e05", "bench of run 12"
  std::optional<RunId> run_id;
  UnixSeconds started_at = 0;
  friend bool operator==(const ChildGroupRecord&, const ChildGroupRecord&) = default;
};

class ProcessStore {
 public:
  explicit ProcessStore(Database& db) : db_(db) {}

  // Records `owner` as the process running `run`.
  Status set_run_owner(RunId run, const ProcessOwner& owner);

  // Cuts off (status cut_off, trial_count brought up to date, the reason
  // appended to its message) every run still `running` that is no job's
  // (perfwatch bench, noise; a job's runs are the queue's, see
  // JobQueue::recover_after_crash) and whose owner is dead: on `host`, and
  // either on another boot than `boot_id` or not `alive`. Runs of other
  // hosts, and runs with no recorded owner, are left as they are. Returns
  // the runs it cut off.
  Result<std::vector<RunId>> cut_off_orphaned_runs(const std::string& host, const std::string& boot_id,
                                                   const std::function<bool(const ProcessOwner&)>& alive);

  // Records a group that has started; returns its row id.
  Result<std::int64_t> add_group(const ChildGroupRecord& group);
  // Forgets a group that has ended (absent: nothing to do).
  Status remove_group(std::int64_t id);
  // The groups recorded by perfwatch processes on `host`, oldest first.
  Result<std::vector<ChildGroupRecord>> groups_on(const std::string& host);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
