// Process groups perfwatch started, told apart from anything that later got
// the same pid. A pid is recycled; the pair (pid, start time since boot) on
// one boot of one machine is not, so that pair is what the daemon records
// and what it checks before it signals anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace perfwatch::runner {

// One process, as this machine knows it: its pid and the time it started
// (/proc/<pid>/stat field 22, clock ticks since boot).
struct ProcessIdentity {
  int pid = 0;
  std::uint64_t start_ticks = 0;
};

// The process's start time, nullopt when there is no such process.
std::optional<std::uint64_t> start_ticks_of(int pid);

// This process.
ProcessIdentity self();

// /proc/sys/kernel/random/boot_id: start times count from this boot only.
std::string boot_id();
std::string host_name();

// True when `process` still runs (or is a zombie not yet reaped): a process
// with that pid exists and started at that time.
bool alive(const ProcessIdentity& process);

enum class Leftover {
  kGone,      // nothing of the group is left
  kEnded,     // members were left; they got SIGTERM, and SIGKILL after the grace period
  kNotOurs,   // the pid now belongs to another process: nothing was signalled
};
const char* to_string(Leftover what);

// Ends what is left of a group this machine's perfwatch started on this boot
// (`leader` is the group's leader as recorded when it started; the group id
// is its pid). Signals only processes of that group whose start time is not
// before the leader's: once the leader is gone its members may remain, and
// their pgid cannot be recycled while any of them lives.
Leftover end_leftover_group(const ProcessIdentity& leader, double grace_s);

}  // namespace perfwatch::runner
