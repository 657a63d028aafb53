// One run of an adapter: the protocol spoken around the program it drives.
//
// run_session reads the plan, lets the adapter prepare, writes the header and
// one line per variant, then answers each measure request, and writes the
// footer when stdin closes. It owns the protocol's rules, so that no adapter
// can break them: a check before a cell's first trial, trials numbered per
// cell from 1, a `skipped` line for a variant that is infeasible and for a
// cell whose check failed (the adapter is not asked again), every metric
// declared and > 0. An adapter only measures: it answers a request through a
// Cell, and returns an error when the run cannot go on.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/protocol.h"
#include "common/result.h"

namespace perfwatch::adapters {

// Metric name -> value of one trial.
using MetricValues = std::map<std::string, double>;

// Why these values cannot be a trial of `plan`: a metric that is not
// declared, a value that is not finite and > 0, or no judged metric; nullopt
// when they can.
std::optional<std::string> invalid_values(const Plan& plan, const MetricValues& values);

// "tokens_per_s=1234.5 time_us=81.2": for logs and check details.
std::string describe(const MetricValues& values);

// What a variant line says.
struct VariantReport {
  bool feasible = true;
  std::string reason;                        // why not, when infeasible
  std::vector<std::string> ignored_params;   // params the program is not told about
};

// The answer to one measure request for one variant at one point (a "cell").
class Cell {
 public:
  enum class Status { kUnchecked, kOk, kIncorrect, kInfeasible, kFailed };
  struct State {
    Status status = Status::kUnchecked;
    std::string reason;
    int trials = 0;           // trial lines written for this cell in this run
    bool infeasible = false;  // kFailed: the program said it cannot run
  };

  Cell(const Plan& plan, const Variant& v, const Point& p, int requested, State& state, LineWriter& out)
      : plan_(plan), variant_(v), point_(p), requested_(requested), state_(state), out_(out) {}

  // True until the cell's check line is written: this request is the first
  // time the variant meets the point, and must begin with a check.
  bool first() const { return state_.status == Status::kUnchecked; }
  int requested() const { return requested_; }
  int written() const { return written_; }

  // The check line, status ok; trials follow. `detail` is free-form, for people.
  // REQUIRES: first().
  void check_ok(const nlohmann::json& detail = nlohmann::json::object());
  // The check line, status incorrect or infeasible, with the reason: the
  // request is answered, and every later request for this cell is answered
  // with a skipped line by the session. REQUIRES: first().
  void check_incorrect(const std::string& reason, const nlohmann::json& detail = nlohmann::json::object());
  void check_infeasible(const std::string& reason, const nlohmann::json& detail = nlohmann::json::object());

  // One trial line. Fails (kInternal) when the check has not passed, the
  // request already has its trials, or the values are invalid (see
  // invalid_values): the adapter must classify bad values before.
  perfwatch::Status trial(const MetricValues& values, std::optional<std::int64_t> steps = std::nullopt,
                          std::optional<double> clock_mhz = std::nullopt);

  // The program failed after the cell's check had passed (it exited non-zero,
  // timed out, or reported an error). When this request has no trial line
  // yet, answers it with a skipped line (status "unknown", or "infeasible"
  // when the program itself said it cannot run) and marks the cell failed, so
  // later requests get the same skipped line; returns OK and the run goes on.
  // When some trial lines of the request are out already, the protocol has
  // no way to say "fewer than asked": returns an error (kFailed, where = the
  // cell) that ends the run.
  perfwatch::Status fail(const std::string& reason, bool infeasible = false);

  // The request has its answer: a failed check, all its trials, or a skipped line.
  bool answered() const;

 private:
  void check(const char* status, const std::string& reason, const nlohmann::json& detail);
  const Plan& plan_;
  const Variant& variant_;
  const Point& point_;
  int requested_;
  State& state_;
  LineWriter& out_;
  int written_ = 0;
  bool skipped_ = false;
};

// An adapter: drives one kind of benchmark program.
class Bench {
 public:
  virtual ~Bench() = default;
  // Checks the plan against the manifest's adapter section and the program
  // (it exists, its benchmarks are the ones the templates name), measuring
  // nothing. An error is written as the run's first line (an error line).
  virtual perfwatch::Status prepare(const Plan& plan) = 0;
  // The header line without kind and schema_version. REQUIRES: prepared.
  virtual nlohmann::json header() const = 0;
  virtual VariantReport variant(const Variant& v) const {
    (void)v;
    return {};
  }
  // Answers one request through `cell` (see Cell). An error ends the run:
  // the session writes it as an error line and exits non-zero.
  virtual perfwatch::Status measure(const Variant& v, const Point& p, Cell& cell) = 0;
};

// Speaks the protocol around `bench` until stdin closes. Returns the exit
// status: 0 after the footer; 1 after an error line (a bad plan or request,
// a failed prepare, an error from measure).
int run_session(Bench& bench, std::istream& in, std::ostream& out, std::ostream& log);

}  // namespace perfwatch::adapters
