#include "runner/sweep.h"

#include <chrono>
#include <cstdio>
#include <map>

#include "analysis/summary.h"
#include "common/text.h"
#include "runner/launcher.h"
#include "runner/process.h"
#include "runner/protocol.h"

namespace perfwatch::runner {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::kOk: return "ok";
    case RunStatus::kCrashed: return "crashed";
    case RunStatus::kTimedOut: return "timeout";
    case RunStatus::kProtocolError: return "protocol_error";
    case RunStatus::kFailed: return "failed";
    case RunStatus::kFailedToStart: return "failed_to_start";
    case RunStatus::kStopped: return "stopped";
    case RunStatus::kStoreFailed: return "store_failed";
  }
  return "failed";
}

namespace {

Clock::time_point after(double seconds) { return deadline_after(seconds); }

// A manifest's limit in a message: as written, never cast to an int (1e300 would not fit).
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Thrown inside the run loop to end the run with a status; caught in run_sweep.
struct RunEnd {
  RunStatus status;
  std::string message;
};

class Session {
 public:
  Session(const SweepRequest& request, RunSink& sink, const Protocol& protocol, LineChild& child)
      : req_(request), m_(*request.manifest), sink_(sink), protocol_(protocol), child_(child),
        start_(Clock::now()), run_deadline_(after(m_.bench.timeout_s)) {}

  int trials() const { return trials_; }

  void run(const json& plan, const std::vector<PointSpec>& points) {
    send(plan);
    BenchLine header = expect({LineKind::kHeader}, "the header");
    sink_.on_header(header.doc);
    std::vector<std::string> runnable;
    for (const auto& v : m_.variants) {
      BenchLine line = expect({LineKind::kVariant}, "the variant line of '" + v.name + "'");
      if (line.doc["variant"] != v.name) {
        throw RunEnd{RunStatus::kProtocolError, where() + ": variant: expected '" + v.name + "', got " + json_text(line.doc["variant"])};
      }
      sink_.on_variant(line.doc);
      if (line.doc["status"] == "ok") runnable.push_back(v.name);
    }
    for (size_t i = 0; i < points.size(); ++i) measure_point(points[i], static_cast<int>(i), static_cast<int>(points.size()), runnable);
    child_.close_stdin();
    expect({LineKind::kFooter}, "the footer");
    if (auto failed = sink_.failure()) throw RunEnd{RunStatus::kStoreFailed, "storing the run failed: " + *failed};
    std::string extra;
    if (child_.read_line(&extra, deadline()) == LineChild::Read::kLine) {
      throw RunEnd{RunStatus::kProtocolError, where(1) + ": the bench wrote after its footer: '" + extra.substr(0, 120) + "'"};
    }
  }

 private:
  struct VariantAtPoint {
    std::vector<double> values;   // not throttled
    int trials = 0;
    int throttled = 0;
    double busy_s = 0;
    bool done = false;
  };

  void measure_point(const PointSpec& point, int index, int count, const std::vector<std::string>& runnable) {
    analysis::TrialPolicy policy{m_.trials.min, m_.trials.max, m_.trials.target_rel_ci, m_.trials.budget_s};
    std::map<std::string, VariantAtPoint> state;
    for (const auto& v : runnable) state[v];
    bool pending = !runnable.empty();
    while (pending) {
      pending = false;
      // One trial of each unfinished variant per round: A B A B ...
      for (const auto& name : runnable) {
        VariantAtPoint& s = state[name];
        if (s.done) continue;
        auto t0 = Clock::now();
        bool timed = measure_once(name, point, &s);
        s.busy_s += since(t0);
        analysis::StopReason reason = analysis::StopReason::kContinue;
        if (!timed) {
          s.done = true;
        } else if (s.trials >= policy.max_trials) {
          reason = analysis::StopReason::kMaxTrials;  // counts throttled trials too, so it always ends
        } else if (!s.values.empty()) {
          reason = analysis::stopping_rule(s.values, policy, s.busy_s);
        } else if (s.busy_s >= policy.budget_s) {
          reason = analysis::StopReason::kBudget;
        }
        if (reason != analysis::StopReason::kContinue) s.done = true;
        if (s.done && timed) sink_.on_point_done(name, point, s.values, s.throttled, reason);
        SweepProgress progress{index, count, point.id, name, s.trials, 0, since(start_)};
        if (s.values.size() >= 2) progress.rel_ci = analysis::summarize(s.values).rel_ci_halfwidth();
        sink_.on_progress(progress);
        pending = pending || !s.done;
      }
    }
  }

  // Asks for one trial. Returns false when the bench skipped the pair
  // (incorrect, infeasible at this point).
  bool measure_once(const std::string& variant, const PointSpec& point, VariantAtPoint* s) {
    send(Protocol::measure_request(variant, point.id, 1));
    for (;;) {
      BenchLine line = expect({LineKind::kCheck, LineKind::kTrial, LineKind::kSkipped}, "the answer to a measure request");
      if (line.doc["variant"] != variant || line.doc["point"] != point.id) {
        throw RunEnd{RunStatus::kProtocolError, where() + ": answered for " + json_text(line.doc["variant"]) + " at " +
                                                    json_text(line.doc["point"]) + ", asked for '" + variant + "' at '" + point.id + "'"};
      }
      switch (line.kind) {
        case LineKind::kCheck:
          sink_.on_check(protocol_.check(line.doc, point.key));
          continue;
        case LineKind::kSkipped:
          sink_.on_skipped(protocol_.skipped(line.doc, point.key));
          return false;
        case LineKind::kTrial: {
          int expected = s->trials + 1;
          if (line.doc["trial"] != expected) {
            throw RunEnd{RunStatus::kProtocolError, where() + ": trial: expected " + std::to_string(expected) + ", got " + json_text(line.doc["trial"])};
          }
          TrialLine trial = protocol_.trial(line.doc, point.key);
          if (auto ok = check_trial_metrics(trial, m_); !ok) {
            throw RunEnd{RunStatus::kProtocolError, where() + ": " + ok.error().where + ": " + ok.error().message};
          }
          sink_.on_trial(trial);
          ++trials_;
          ++s->trials;
          if (trial.throttled) ++s->throttled;
          else s->values.push_back(trial.metrics.at(m_.metric.name));
          return true;
        }
        default:
          break;
      }
    }
  }

  void send(const json& doc) {
    if (auto failed = sink_.failure()) throw RunEnd{RunStatus::kStoreFailed, "storing the run failed: " + *failed};
    if (auto ok = child_.write_line(json_text(doc)); !ok) {
      throw RunEnd{RunStatus::kCrashed, "the bench stopped reading its stdin"};
    }
  }

  Clock::time_point deadline() const { return std::min(after(m_.bench.idle_timeout_s), run_deadline_); }

  std::string where(int ahead = 0) const { return "bench stdout line " + std::to_string(line_no_ + ahead); }

  // Reads the next line and requires one of `kinds`. An error line from the
  // bench ends the run as failed, with its message.
  BenchLine expect(std::initializer_list<LineKind> kinds, const std::string& what) {
    std::string text;
    auto d = deadline();
    switch (child_.read_line(&text, d)) {
      case LineChild::Read::kLine:
        break;
      case LineChild::Read::kEof:
        throw RunEnd{RunStatus::kCrashed, "the bench's output ended before " + what};
      case LineChild::Read::kTimeout:
        if (Clock::now() >= run_deadline_) {
          throw RunEnd{RunStatus::kTimedOut, "the run took longer than bench.timeout_s (" + seconds_text(m_.bench.timeout_s) + " s) waiting for " + what};
        }
        throw RunEnd{RunStatus::kTimedOut, "the bench wrote nothing for bench.idle_timeout_s (" + seconds_text(m_.bench.idle_timeout_s) + " s) while perfwatch waited for " + what};
      case LineChild::Read::kTooLong:
        ++line_no_;
        throw RunEnd{RunStatus::kProtocolError, where() + ": longer than 1 MiB"};
      case LineChild::Read::kStopped:
        throw RunEnd{RunStatus::kStopped, "stopped while waiting for " + what + ": perfwatch was asked to stop"};
    }
    ++line_no_;
    // The sink kept the previous line, or the run ends here.
    if (auto failed = sink_.failure()) throw RunEnd{RunStatus::kStoreFailed, "storing the run failed: " + *failed};
    auto line = protocol_.parse(text, line_no_);
    if (!line) throw RunEnd{RunStatus::kProtocolError, line.error().to_string()};
    if (line->kind == LineKind::kError) {
      std::string at = line->doc.value("where", "");
      throw RunEnd{RunStatus::kFailed, "the bench reported an error" + (at.empty() ? "" : " at " + at) + ": " + line->doc["message"].get<std::string>()};
    }
    for (LineKind k : kinds) {
      if (line->kind == k) return std::move(*line);
    }
    throw RunEnd{RunStatus::kProtocolError, where() + ": a " + to_string(line->kind) + " line where perfwatch expected " + what};
  }

  const SweepRequest& req_;
  const Manifest& m_;
  RunSink& sink_;
  const Protocol& protocol_;
  LineChild& child_;
  Clock::time_point start_;
  Clock::time_point run_deadline_;
  int line_no_ = 0;
  int trials_ = 0;
};

}  // namespace

SweepResult run_sweep(const SweepRequest& req, RunSink& sink) {
  SweepResult result;
  const Manifest& m = *req.manifest;
  auto start = Clock::now();
  auto finish = [&](RunStatus status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    result.wall_s = since(start);
    return result;
  };

  auto protocol = Protocol::load(m.schema_version);
  if (!protocol) return finish(RunStatus::kFailedToStart, protocol.error().to_string());
  const std::vector<PointSpec>& points = req.points.empty() ? m.points : req.points;
  auto plan = protocol->make_plan(m, points, req.seed);
  if (!plan) return finish(RunStatus::kFailedToStart, plan.error().to_string());

  auto workdir = resolve_workdir(req.checkout, m.bench.workdir, "bench.workdir");
  if (!workdir) return finish(RunStatus::kFailedToStart, workdir.error().to_string());
  ProcessSpec spec;
  spec.workdir = *workdir;
  spec.env = m.bench.env;
  if (m.bench.adapter.empty()) {
    spec.command = m.bench.command;
  } else {
    // An adapter is a bench program too (adapters/README.md, "The contract
    // with the runner"): perfwatch itself, told which adapter and handed the
    // manifest's bench object, with the same plan, requests and limits.
    std::error_code ec;
    std::filesystem::path self =
        req.self_executable.empty() ? std::filesystem::read_symlink("/proc/self/exe", ec) : req.self_executable;
    if (ec) return finish(RunStatus::kFailedToStart, "bench.adapter: cannot find the perfwatch executable: " + ec.message());
    spec.argv = {self.string(), "adapter", "--kind", m.bench.adapter};
    spec.env["PERFWATCH_ADAPTER_BENCH"] = json_text(m.bench.source);
  }
  for (const auto& [k, v] : req.extra_env) spec.env[k] = v;
  spec.watch = req.watch;
  auto child = LineChild::start(through(req.launcher, std::move(spec)), req.stderr_log);
  if (!child) return finish(RunStatus::kFailedToStart, child.error().to_string());

  Session session(req, sink, *protocol, **child);
  RunStatus status = RunStatus::kOk;
  std::string message;
  try {
    session.run(*plan, points);
  } catch (const RunEnd& end) {
    status = end.status;
    message = end.message;
  }
  result.trials = session.trials();

  if (status == RunStatus::kOk) {
    // The footer came: give the bench a moment to exit on its own.
    result.process = (*child)->wait(after(std::min(30.0, m.bench.idle_timeout_s)));
    if (!result.process.ok()) {
      status = RunStatus::kFailed;
      message = "the bench wrote its footer but then " + result.process.describe();
    }
  } else {
    if (status == RunStatus::kCrashed) {
      // The output ended: the process is dying or dead; collect how it ended.
      result.process = (*child)->wait(after(5));
      message += ": the bench " + result.process.describe();
    } else if (status == RunStatus::kStopped) {
      result.process = (*child)->wait(Clock::now());  // a stop: ends the group at once
    } else {
      (*child)->kill();
      result.process = (*child)->wait(after(5));
    }
  }
  return finish(status, message);
}

}  // namespace perfwatch::runner
