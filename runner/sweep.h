// One run: start the bench program once, send it the plan, then measure each
// point, interleaving the variants' trials (A B A B ...) so that the run's own
// drift cancels in comparisons between them, until each variant's median is
// as tight as the manifest asks or its trial/time budget is spent.
//
// Every line read is validated and handed to the sink at once, so a crash, a
// hang or garbage later in the run loses nothing already measured.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/stopping.h"
#include "runner/manifest.h"
#include "runner/process.h"
#include "runner/protocol.h"

namespace perfwatch::runner {

// How a run ended. Stored with the run; the CLI turns it into an exit code.
enum class RunStatus {
  kOk,
  kCrashed,         // the bench died (signal, or exit before its footer)
  kTimedOut,        // no line within bench.idle_timeout_s, or past bench.timeout_s
  kProtocolError,   // a line that is not valid protocol
  kFailed,          // the bench reported an error, or exited non-zero after its footer
  kFailedToStart,
  kStopped,         // perfwatch was asked to stop (SweepRequest::watch.stop): the bench's group was ended
  kStoreFailed,     // the sink could not keep a line (disk full, I/O error): the run ended at once
};
// "ok", "crashed", "timeout", "protocol_error", "failed", "failed_to_start", "stopped", "store_failed"
const char* to_string(RunStatus status);

struct SweepProgress {
  int point_index = 0;      // 0-based
  int points = 0;
  std::string point;
  std::string variant;
  int trials = 0;           // of this variant at this point so far
  double rel_ci = 0;        // its current relative CI half-width (0 until known)
  double elapsed_s = 0;     // since the run started
};

// Receives what the bench reports, as it arrives, validated. The header and
// variant lines are the documents as written (the same fields in both
// protocol versions: schemas/bench/, schemas/bench/v2/); checks, trials and
// skips are normalised (protocol.h), their point named by its key.
class RunSink {
 public:
  virtual ~RunSink() = default;
  virtual void on_header(const nlohmann::json& header) = 0;
  virtual void on_variant(const nlohmann::json& line) = 0;
  virtual void on_check(const CheckLine& line) = 0;
  virtual void on_trial(const TrialLine& trial) = 0;
  virtual void on_skipped(const SkippedLine& line) = 0;
  // A variant is done at a point: the metric values of its trials that were
  // not throttled, how many throttled ones were dropped, and why it stopped.
  virtual void on_point_done(const std::string& variant, const PointSpec& point, const std::vector<double>& values,
                             int dropped_throttled, analysis::StopReason reason) = 0;
  virtual void on_progress(const SweepProgress&) {}
  // What the sink could not keep, if anything ("disk full"): checked after
  // every line, and the run ends at once with kStoreFailed -- measuring on
  // would drive the bench through trials whose results are thrown away.
  virtual std::optional<std::string> failure() const { return std::nullopt; }
};

struct SweepRequest {
  const Manifest* manifest = nullptr;
  std::filesystem::path checkout;      // the bench runs in <checkout>/<bench.workdir>
  std::filesystem::path stderr_log;    // the bench's stderr, kept whole
  std::vector<PointSpec> points;       // empty = all of the manifest's
  std::uint64_t seed = 0;              // 0 = the bench picks one (reported in its header)
  std::map<std::string, std::string> extra_env;  // on top of bench.env (CUDA_VISIBLE_DEVICES of a GPU slot)
  // Runs the bench elsewhere (launcher.h: `srun ... --`); empty: here.
  std::vector<std::string> launcher;
  // The perfwatch executable that runs a manifest's bench.adapter
  // (`<it> adapter --kind K`); empty = this process's own (/proc/self/exe).
  std::filesystem::path self_executable;
  // A stop request and the record of the bench's process group (process.h).
  ChildWatch watch;
};

struct SweepResult {
  RunStatus status = RunStatus::kOk;
  std::string message;                 // what happened, for people: "bench stdout line 9: not a JSON object: 'oops'"
  int trials = 0;                      // trial lines received and handed to the sink
  ProcessResult process;               // exit, signal or timeout; tail = the end of its stderr
  double wall_s = 0;
};

SweepResult run_sweep(const SweepRequest& request, RunSink& sink);

}  // namespace perfwatch::runner
