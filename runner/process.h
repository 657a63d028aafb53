// Child processes: builds, git, and the bench. A child's outcome is a value
// (exited, killed by a signal, timed out, failed to start) with its exit code
// or signal, wall time and the tail of its output; only the caller decides
// what it means. Every child leads its own process group, so a timeout or a
// stop ends everything it started (cmake -> ninja -> nvcc), not just the
// shell: SIGTERM to the group, SIGKILL after a grace period.
//
// A child dies with the thread that started it (PR_SET_PDEATHSIG, SIGKILL):
// a perfwatch killed with -9 leaves no running bench. Only the child itself
// gets that signal; what it started lives on in its group, which the caller
// can record (ChildWatch::started) and end at its next start
// (process_groups.h). Start children from a thread that outlives them.
//
// Output is read until the child has exited and its pipes stayed quiet for a
// short drain (0.2 s): a grandchild that keeps the pipe open does not keep
// perfwatch waiting. Logs are capped (capped_log.h).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "runner/process_groups.h"

namespace perfwatch::runner {

// What a caller lets a child see of the world around it. All optional.
struct ChildWatch {
  // When set (a signal handler sets it), the child's group is ended
  // (SIGTERM, then SIGKILL after stop_grace_s) and the outcome is kStopped;
  // checked every 0.1 s.
  const std::atomic<bool>* stop = nullptr;
  double stop_grace_s = 2;
  // Called once the child runs (its pid is its group id), and once the
  // group has been ended or the child reaped. Neither is called for a child
  // that failed to start.
  std::function<void(const ProcessIdentity& leader)> started;
  std::function<void(const ProcessIdentity& leader)> ended;
};

struct ProcessSpec {
  std::string command;                      // run as /bin/sh -c <command>
  std::vector<std::string> argv;            // or, when command is empty, run argv[0] with these arguments
  std::filesystem::path workdir;
  std::map<std::string, std::string> env;   // set on top of the inherited environment
  double timeout_s = 0;                     // wall-clock limit; 0 = none
  // A log written by run_logged or LineChild keeps this many bytes of its
  // head and as many of its tail, with a line saying how much was dropped.
  std::size_t log_cap_bytes = 1 << 20;
  ChildWatch watch;
};

// The time `timeout_s` from now on the steady clock. A limit that is not
// positive, not a number, or too far ahead for the clock (a manifest may say
// 1e300 s) is no limit: time_point::max(), never an overflow that would put
// the deadline in the past and time the child out at once.
std::chrono::steady_clock::time_point deadline_after(double timeout_s);

enum class Outcome { kExited, kSignalled, kTimedOut, kStopped, kFailedToStart };
const char* to_string(Outcome outcome);

struct ProcessResult {
  Outcome outcome = Outcome::kFailedToStart;
  int exit_code = -1;        // when kExited
  int signal = 0;            // when kSignalled
  double wall_s = 0;
  std::string tail;          // the last bytes of what it wrote (stderr for the bench)
  std::string start_error;   // when kFailedToStart

  bool ok() const { return outcome == Outcome::kExited && exit_code == 0; }
  // "exited with code 2", "killed by signal 11 (SIGSEGV)", "timed out after 30 s", "stopped ...", "failed to start: ..."
  std::string describe() const;
};

// Runs to completion with stdout and stderr written to log_path (truncated
// first, capped at spec.log_cap_bytes head + tail), then returns the last
// tail_bytes of the log.
ProcessResult run_logged(const ProcessSpec& spec, const std::filesystem::path& log_path, size_t tail_bytes = 8192);

// Runs to completion and returns what it wrote on stdout; stderr goes to the tail.
struct Captured {
  ProcessResult result;
  std::string out;
};
Captured run_captured(const ProcessSpec& spec);

// A child that speaks a line protocol on stdin/stdout (the bench program).
// Its stderr goes to a capped file. The destructor ends the process group,
// so no early return can leak a bench.
class LineChild {
 public:
  // Starts the child. Ignores SIGPIPE in this process (a bench that dies
  // while we write to it must not kill the runner).
  static Result<std::unique_ptr<LineChild>> start(const ProcessSpec& spec, const std::filesystem::path& stderr_log);
  ~LineChild();
  LineChild(const LineChild&) = delete;
  LineChild& operator=(const LineChild&) = delete;

  // Fails when the child has closed its stdin (it died or stopped reading).
  Status write_line(std::string_view line);
  void close_stdin();

  enum class Read { kLine, kEof, kTimeout, kTooLong, kStopped };
  // Reads the next line (without its newline) until the deadline. A line
  // longer than max_line_bytes is reported as kTooLong; kEof once stdout is
  // closed, or once the child has exited and stdout has been quiet for the
  // drain; kStopped when spec.watch.stop is set.
  Read read_line(std::string* line, std::chrono::steady_clock::time_point deadline,
                 size_t max_line_bytes = 1 << 20);

  // Waits for exit until the deadline (or a stop), then ends the process
  // group; what is left of the group is ended either way.
  ProcessResult wait(std::chrono::steady_clock::time_point deadline);
  // Ends the process group now (SIGTERM, SIGKILL after the grace period).
  void kill();
  int pid() const;

 private:
  struct Impl;
  explicit LineChild(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The last `bytes` bytes of a file ("" when it cannot be read).
std::string file_tail(const std::filesystem::path& path, size_t bytes);

}  // namespace perfwatch::runner
