#include "adapters/session.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace perfwatch::adapters {

using nlohmann::json;

std::optional<std::string> invalid_values(const Plan& plan, const MetricValues& values) {
  for (const auto& [name, value] : values) {
    if (plan.metric(name) == nullptr)
      return name + " is not a declared metric (declared: " + plan.metric_names() + ")";
    if (!std::isfinite(value) || value <= 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", value);
      return name + " = " + buf + ": a measured value must be finite and > 0";
    }
  }
  if (!values.contains(plan.judged_metric)) return "no value for the judged metric " + plan.judged_metric;
  return std::nullopt;
}

std::string describe(const MetricValues& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    out += (out.empty() ? "" : " ") + name + "=" + buf;
  }
  return out;
}

void Cell::check(const char* status, const std::string& reason, const json& detail) {
  json line = {{"kind", "check"}, {"variant", variant_.name}, {"point", point_.id}, {"status", status}};
  if (!reason.empty()) line["reason"] = reason;
  if (detail.is_object() && !detail.empty()) line["detail"] = detail;
  out_.write(line);
}

void Cell::check_ok(const json& detail) {
  check("ok", "", detail);
  state_.status = Status::kOk;
}

void Cell::check_incorrect(const std::string& reason, const json& detail) {
  check("incorrect", reason.empty() ? "incorrect" : reason, detail);
  state_.status = Status::kIncorrect;
  state_.reason = reason;
}

void Cell::check_infeasible(const std::string& reason, const json& detail) {
  check("infeasible", reason.empty() ? "infeasible" : reason, detail);
  state_.status = Status::kInfeasible;
  state_.reason = reason;
}

perfwatch::Status Cell::trial(const MetricValues& values, std::optional<std::int64_t> steps,
                              std::optional<double> clock_mhz) {
  const std::string where = "variant '" + variant_.name + "' at point '" + point_.id + "'";
  if (state_.status != Status::kOk)
    return perfwatch::fail(Error{ErrorCode::kInternal, where, "a trial without a passing check"});
  if (written_ >= requested_ || skipped_)
    return perfwatch::fail(Error{ErrorCode::kInternal, where, "more trials than requested"});
  if (auto bad = invalid_values(plan_, values)) return perfwatch::fail(Error{ErrorCode::kInternal, where, *bad});
  json metrics = json::object();
  for (const auto& [name, value] : values) metrics[name] = value;
  json line = {{"kind", "trial"}, {"variant", variant_.name}, {"point", point_.id},
               {"trial", ++state_.trials}, {"metrics", metrics}};
  if (steps && *steps >= 1) line["steps"] = *steps;
  if (clock_mhz && std::isfinite(*clock_mhz) && *clock_mhz > 0) line["clock_mhz"] = *clock_mhz;
  out_.write(line);
  ++written_;
  return {};
}

perfwatch::Status Cell::fail(const std::string& reason, bool infeasible) {
  const std::string where = "variant '" + variant_.name + "' at point '" + point_.id + "'";
  if (state_.status != Status::kOk)
    return perfwatch::fail(Error{ErrorCode::kInternal, where, "a failure reported before the check passed"});
  if (written_ > 0)
    return perfwatch::fail(Error{ErrorCode::kFailed, where,
                                 "failed after " + std::to_string(written_) + " of the " + std::to_string(requested_) +
                                     " trials asked for: " + reason});
  out_.write({{"kind", "skipped"},
              {"variant", variant_.name},
              {"point", point_.id},
              {"status", infeasible ? "infeasible" : "unknown"},
              {"reason", reason}});
  skipped_ = true;
  state_.status = Status::kFailed;
  state_.reason = reason;
  state_.infeasible = infeasible;
  return {};
}

bool Cell::answered() const {
  if (skipped_) return true;
  if (state_.status == Status::kIncorrect || state_.status == Status::kInfeasible) return true;
  return state_.status == Status::kOk && written_ == requested_;
}

namespace {

using Clock = std::chrono::steady_clock;

int end_with_error(LineWriter& out, std::ostream& log, const Error& e) {
  out.error(e.where, e.message);
  log << "perfwatch adapter: " << e.to_string() << "\n";
  log.flush();
  return 1;
}

const char* skip_status(const Cell::State& s) {
  switch (s.status) {
    case Cell::Status::kIncorrect: return "incorrect";
    case Cell::Status::kInfeasible: return "infeasible";
    case Cell::Status::kFailed: return s.infeasible ? "infeasible" : "unknown";
    default: return "unknown";
  }
}

int speak(Bench& bench, std::istream& in, LineWriter& out, std::ostream& log) {
  const auto start = Clock::now();
  auto reader = RequestReader::load();
  if (!reader) return end_with_error(out, log, reader.error());
  auto plan = reader->read_plan(in);
  if (!plan) return end_with_error(out, log, plan.error());
  if (auto ok = bench.prepare(*plan); !ok) return end_with_error(out, log, ok.error());

  json header = bench.header();
  header["kind"] = "header";
  header["schema_version"] = 2;
  out.write(header);

  std::map<std::string, VariantReport> reports;
  for (const auto& v : plan->variants) {
    VariantReport report = bench.variant(v);
    json line = {{"kind", "variant"}, {"variant", v.name}, {"params", v.params},
                 {"status", report.feasible ? "ok" : "infeasible"}};
    if (!report.feasible) line["reason"] = report.reason.empty() ? "infeasible" : report.reason;
    if (!report.ignored_params.empty()) line["ignored_params"] = report.ignored_params;
    out.write(line);
    reports[v.name] = std::move(report);
  }

  std::map<std::pair<std::string, std::string>, Cell::State> cells;
  for (;;) {
    auto request = reader->next(in, *plan);
    if (!request) return end_with_error(out, log, request.error());
    if (!*request) break;
    const MeasureRequest& r = **request;
    const Variant& v = *plan->variant(r.variant);
    const Point& p = *plan->point(r.point);
    const VariantReport& report = reports[v.name];
    Cell::State& state = cells[{v.name, p.id}];

    if (!report.feasible) {
      out.write({{"kind", "skipped"}, {"variant", v.name}, {"point", p.id}, {"status", "infeasible"},
                 {"reason", report.reason.empty() ? "infeasible" : report.reason}});
      continue;
    }
    if (state.status != Cell::Status::kUnchecked && state.status != Cell::Status::kOk) {
      out.write({{"kind", "skipped"}, {"variant", v.name}, {"point", p.id}, {"status", skip_status(state)},
                 {"reason", state.reason.empty() ? std::string(skip_status(state)) : state.reason}});
      continue;
    }
    Cell cell(*plan, v, p, r.trials, state, out);
    if (auto ok = bench.measure(v, p, cell); !ok) return end_with_error(out, log, ok.error());
    if (!cell.answered())
      return end_with_error(out, log,
                            Error{ErrorCode::kInternal, "variant '" + v.name + "' at point '" + p.id + "'",
                                  "the adapter answered " + std::to_string(cell.written()) + " of " +
                                      std::to_string(r.trials) + " trials"});
  }

  out.write({{"kind", "footer"},
             {"trials", out.trials_written()},
             {"wall_s", std::chrono::duration<double>(Clock::now() - start).count()}});
  return 0;
}

}  // namespace

int run_session(Bench& bench, std::istream& in, std::ostream& out_stream, std::ostream& log) {
  LineWriter out(out_stream);
  // The program's output is untrusted: a value of an unexpected JSON type
  // that slipped past an adapter's checks must end the run with an error
  // line, never the process with an exception.
  try {
    return speak(bench, in, out, log);
  } catch (const std::exception& e) {
    return end_with_error(out, log, Error{ErrorCode::kInternal, "perfwatch adapter", e.what()});
  }
}

}  // namespace perfwatch::adapters
