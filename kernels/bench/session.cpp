#include "session.h"

#include <chrono>
#include <cstdio>
#include <new>

namespace mla::bench {
namespace {

// References are kept for every point unless they grow past this; then only
// the resident point's stays.
constexpr double kReferenceCacheBytes = 512e6;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Session::Session(Plan plan, std::uint64_t seed, Backend& backend, LineWriter& out)
    : plan_(std::move(plan)), dialect_(Dialect::of(plan_)), seed_(seed), backend_(backend), out_(out) {}

void Session::write_variants() {
  reports_.clear();
  for (const PlanVariant& variant : plan_.variants) {
    reports_.push_back(backend_.describe(variant.params));
    out_.write(variant_line(dialect_, variant, reports_.back()));
  }
}

void Session::measure(const MeasureRequest& request) {
  const int v = plan_.find_variant(request.variant);
  const int p = plan_.find_point(request.point);
  if (v < 0 || p < 0) {
    const std::string reason = v < 0 ? "the plan has no variant named \"" + request.variant + "\""
                                     : "the plan has no point with id \"" + request.point + "\"";
    out_.write(skipped_line(request.variant, request.point, "unknown", reason));
    return;
  }
  Pair& pair = pairs_[{v, p}];
  if (!pair.checked) {
    check(v, p, pair);
    pair.checked = true;
  }
  if (pair.status != "ok") {
    const std::string reason = pair.status == "incorrect" ? "failed the check: " + pair.reason : pair.reason;
    out_.write(skipped_line(request.variant, request.point, pair.status, reason));
    return;
  }

  std::string why;
  Workload* workload = workload_for(p, &why);
  if (workload == nullptr) {  // prepared once for the check; failing now is the machine's doing
    out_.write(skipped_line(request.variant, request.point, "infeasible", why));
    return;
  }
  const PlanVariant& variant = plan_.variants[static_cast<std::size_t>(v)];
  if (pair.warm_generation != generation_ && plan_.warmup_ms > 0) {
    backend_.time_trial(variant.params, *workload, plan_.warmup_ms);
    pair.warm_generation = generation_;
  }
  for (int i = 0; i < request.trials; ++i) {
    const TrialTiming timing = backend_.time_trial(variant.params, *workload, plan_.min_trial_ms);
    out_.write(trial_line(dialect_, request.variant, request.point, ++pair.trials, workload->point(), timing));
  }
}

void Session::check(int v, int p, Pair& pair) {
  const PlanVariant& variant = plan_.variants[static_cast<std::size_t>(v)];
  const PlanPoint& point = plan_.points[static_cast<std::size_t>(p)];
  const VariantReport& described = reports_[static_cast<std::size_t>(v)];
  CheckReport report;
  report.status = "infeasible";
  if (!described.feasible) {
    report.reason = "the variant cannot run on this device: " + described.reason;
  } else {
    const LaunchReport launch = backend_.plan_launch(variant.params, point.point);
    report.launch = launch;
    if (!launch.feasible) {
      report.reason = "the variant cannot run this point: " + launch.reason;
    } else if (Workload* workload = workload_for(p, &report.reason)) {
      const ReferenceOutputs& reference = reference_for(p, *workload);
      const auto start = std::chrono::steady_clock::now();
      const CheckOutputs outputs = backend_.run_check(variant.params, *workload);
      const Comparison comparison = compare(reference, outputs, plan_.tolerance);
      std::fprintf(stderr, "mla_bench: %s at %s: check %s in %.3f s (rel_l2_o %.3g, max_abs_lse %.3g)\n",
                   variant.name.c_str(), point.id.c_str(), comparison.passed ? "ok" : "FAILED", seconds_since(start),
                   comparison.rel_l2_o, comparison.max_abs_lse);
      report.status = comparison.passed ? "ok" : "incorrect";
      report.reason = comparison.reason;
      report.comparison = comparison;
      report.tolerance = plan_.tolerance;
      report.working_set_bytes = workload->working_set_bytes();
      report.input_sets = workload->layout().sets;
    }
  }
  out_.write(check_line(dialect_, variant.name, point.id, report));
  pair.status = report.status;
  pair.reason = report.reason;
}

Workload* Session::workload_for(int p, std::string* why) {
  if (resident_point_ == p) return workload_.get();
  if (auto failed = prepare_failures_.find(p); failed != prepare_failures_.end()) {
    *why = failed->second;
    return nullptr;
  }
  // Free the old point's memory before taking the new one's.
  workload_.reset();
  resident_point_ = -1;
  const PlanPoint& point = plan_.points[static_cast<std::size_t>(p)];
  WorkloadSpec spec;
  spec.seed = seed_;
  spec.context_rows = plan_.context_rows;
  spec.sets = plan_.input_sets;
  spec.check_masked_fraction = plan_.masked_fraction;
  if (plan_.softmax_scale) spec.softmax_scale = static_cast<float>(*plan_.softmax_scale);
  const auto start = std::chrono::steady_clock::now();
  try {
    workload_ = backend_.prepare(point.point, spec);
  } catch (const Error& e) {
    prepare_failures_[p] = std::string("the inputs cannot be prepared: ") + e.what();
  } catch (const std::bad_alloc&) {
    prepare_failures_[p] = "the inputs cannot be prepared: out of memory";
  }
  if (!workload_) {
    *why = prepare_failures_[p];
    std::fprintf(stderr, "mla_bench: point %s: %s\n", point.id.c_str(), why->c_str());
    return nullptr;
  }
  resident_point_ = p;
  ++generation_;
  std::fprintf(stderr, "mla_bench: point %s: inputs prepared in %.3f s (%d timing sets, working set %.1f MB)\n",
               point.id.c_str(), seconds_since(start), workload_->layout().sets, workload_->working_set_bytes() / 1e6);
  return workload_.get();
}

const ReferenceOutputs& Session::reference_for(int p, const Workload& workload) {
  if (auto found = references_.find(p); found != references_.end()) return found->second;
  const auto start = std::chrono::steady_clock::now();
  ReferenceOutputs reference = compute_reference(workload.check_inputs(), plan_.threads);
  std::fprintf(stderr, "mla_bench: point %s: float64 reference in %.3f s\n",
               plan_.points[static_cast<std::size_t>(p)].id.c_str(), seconds_since(start));
  double bytes = 0;
  for (const auto& [id, ref] : references_) bytes += 8.0 * static_cast<double>(ref.o.size() + ref.lse.size());
  if (bytes + 8.0 * static_cast<double>(reference.o.size()) > kReferenceCacheBytes) references_.clear();
  return references_.emplace(p, std::move(reference)).first->second;
}

}  // namespace mla::bench
