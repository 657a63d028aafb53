// mla_bench: the bench program of the sparse MLA decode kernels. Reads a plan
// and measure requests on stdin, writes protocol lines on stdout (see
// --help and schemas/bench/). Diagnostics go to stderr only.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "faults.h"
#include "lines.h"
#include "mla/backend.h"
#include "mla/cpu_backend.h"
#include "plan.h"
#include "provenance.h"
#include "session.h"

namespace mla::bench {
namespace {

constexpr int kExitBadInput = 2;  // a bad plan or request: the caller's mistake
constexpr int kExitFailed = 1;    // the device or the backend failed

const char* const kHelp = R"(mla_bench: times the sparse MLA decode kernels, speaking perfwatch's bench protocol
(version 1, schemas/bench/, or version 2, schemas/bench/v2/: the plan's schema_version picks;
every line of the run is written in that version).

usage: mla_bench < requests        (also: --help, --version)

stdin, one JSON object per line:
  line 1     a plan, version 1: {"kind":"plan","schema_version":1,"backend":"auto|cpu|cuda","seed":N,
             "variants":[{"name":..,"params":{"block_t","num_warps","num_stages","target_ctas"}}],
             "points":[{"id":..,"batch","heads","topk","dtype"}], "check":{..}, "timing":{..}}
             or version 2: {"kind":"plan","schema_version":2,"backend":..,"seed":N,"variants":[..],
             "points":[{"id":..,"axes":{"batch","heads","topk","dtype"}}],
             "metrics":[{"name","unit","direction"}],"judged_metric":NAME,
             "params":{max_rel_l2_o, max_abs_lse, masked_fraction, context_rows, input_sets,
                       softmax_scale, threads},"timing":{min_trial_ms, warmup_ms}}
             dtype: "bf16" or "fp8" (FlashMLA's 656-byte rows; "fp8_e4m3" is the same)
  then       measure requests: {"kind":"measure","variant":NAME,"point":ID,"trials":N}
  EOF        ends the run.
stdout, one JSON object per line, flushed as written:
  header     device, backend and why it was chosen, build id, binary hash, seed
             (version 2 also: timer, the GPU's uuid)
  variant    one per plan variant: resources per kernel, or infeasible + reason
             (version 2 also: which kernels fit a sm_120 card's 99 KB of shared memory)
  check      before the first trial of a (variant, point): output vs the float64
             reference on a masked check set (status ok, incorrect or infeasible)
  trial      one timed batch of decode steps (rotating input sets): time_us per step,
             tokens/s, bytes/s, flop/s (version 2: the declared ones, in "metrics"),
             SM clock, throttled; numbered per (variant, point)
  skipped    the answer for a pair that is incorrect, infeasible or unknown: no time
  footer     after stdin closes: trials written, wall time
  error      the bench cannot go on (bad plan or request: exit 2; backend failure: exit 1)
The plan's warmup_ms runs before the first trial of each (variant, point).

Test only (for the runner's tests): MLA_BENCH_FAULT, comma-separated:
  crash_after_trials=N    abort() after the N-th trial line
  hang_after_trials=N     stop responding after the N-th trial line
  garbage_after_trials=N  write one line that is not JSON after the N-th trial line
  wrong_result            the CPU backend drops each split's last tile: checks fail
)";

class Bench {
 public:
  explicit Bench(const Faults& faults) : faults_(faults), out_(stdout, faults) {}

  int run() {
    const auto start = std::chrono::steady_clock::now();
    std::string text;
    long long line_number = 0;
    if (!next_line(&text, &line_number))
      return fail(kExitBadInput, "stdin", "no plan: stdin closed before the first line");

    nlohmann::json doc;
    if (!parse_json(text, line_number, &doc)) return kExitBadInput;
    Plan plan;
    if (auto error = parse_plan(doc, &plan)) return fail(kExitBadInput, error->where, "plan: " + error->message);

    std::string reason;
    int exit_code = 0;
    std::unique_ptr<Backend> backend = choose_backend(plan, &reason, &exit_code);
    if (!backend) return exit_code;

    const std::uint64_t seed = plan.seed != 0 ? plan.seed : fresh_seed();
    const int version = plan.schema_version;
    out_.write(header_line(Dialect::of(plan), backend->device(), reason, build_info(), seed));
    Session session(std::move(plan), seed, *backend, out_);
    session.write_variants();
    out_.apply_faults();

    while (next_line(&text, &line_number)) {
      if (!parse_json(text, line_number, &doc)) return kExitBadInput;
      MeasureRequest request;
      if (auto error = parse_measure(doc, &request, version))
        return fail(kExitBadInput, "line " + std::to_string(line_number) + ": " + error->where,
                    "line " + std::to_string(line_number) + ": " + error->message);
      try {
        session.measure(request);
      } catch (const std::exception& e) {
        return fail(kExitFailed, "line " + std::to_string(line_number),
                    "measuring " + request.variant + " at " + request.point + ": " + e.what());
      }
    }
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out_.write(footer_line(out_.trials_written(), wall_s));
    return 0;
  }

 private:
  // Skips blank lines; false at end of input.
  static bool next_line(std::string* text, long long* line_number) {
    while (std::getline(std::cin, *text)) {
      ++*line_number;
      if (text->find_first_not_of(" \t\r") != std::string::npos) return true;
    }
    return false;
  }

  bool parse_json(const std::string& text, long long line_number, nlohmann::json* doc) {
    try {
      *doc = nlohmann::json::parse(text);
      return true;
    } catch (const nlohmann::json::parse_error& e) {
      const std::string where = line_number == 1 ? "plan" : "line " + std::to_string(line_number);
      fail(kExitBadInput, where, where + ": not JSON: " + e.what());
      return false;
    }
  }

  int fail(int code, const std::string& where, const std::string& message) {
    out_.write(error_line(where, message));
    std::fprintf(stderr, "mla_bench: %s\n", message.c_str());
    return code;
  }

  static std::uint64_t fresh_seed() {
    const auto now = std::chrono::system_clock::now().time_since_epoch().count();
    // Within 2^53 so that every JSON reader keeps it exact; never 0.
    const std::uint64_t seed = std::hash<long long>{}(static_cast<long long>(now)) * 0x9E3779B97F4A7C15ull;
    return (seed >> 11) | 1;
  }

  std::unique_ptr<Backend> make_cpu(const Plan& plan) {
    CpuBackendOptions options;
    options.threads = plan.threads;
    options.fault_drop_last_tile = faults_.wrong_result;
    return make_cpu_backend(options);
  }

  std::unique_ptr<Backend> choose_backend(const Plan& plan, std::string* reason, int* exit_code) {
    if (plan.backend == "cpu") {
      *reason = "the plan asks for the CPU backend";
      return make_cpu(plan);
    }
#if defined(MLA_HAVE_CUDA)
    std::string why;
    std::unique_ptr<Backend> cuda;
    try {
      cuda = make_cuda_backend(0, &why);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (cuda) {
      if (faults_.wrong_result) std::fprintf(stderr, "mla_bench: MLA_BENCH_FAULT wrong_result acts on the CPU backend only\n");
      *reason = plan.backend == "cuda" ? "the plan asks for the CUDA backend" : "a CUDA device is present";
      return cuda;
    }
    if (plan.backend == "cuda") {
      *exit_code = fail(kExitFailed, "backend", "backend: the plan asks for cuda, but there is no usable CUDA device: " + why);
      return nullptr;
    }
    *reason = "no usable CUDA device: " + why;
    return make_cpu(plan);
#else
    if (plan.backend == "cuda") {
      *exit_code = fail(kExitBadInput, "backend",
                        "backend: the plan asks for cuda, but this mla_bench was built without CUDA (no nvcc when it was configured)");
      return nullptr;
    }
    *reason = "this mla_bench was built without CUDA";
    return make_cpu(plan);
#endif
  }

  Faults faults_;
  LineWriter out_;
};

}  // namespace
}  // namespace mla::bench

int main(int argc, char** argv) {
  using namespace mla::bench;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--version") == 0) {
      const BuildInfo build = build_info();
      std::printf("mla_bench 2 (protocol schema_version 1 and 2)\nbuild: %s\nbinary: %s\n", build.id.c_str(),
                  build.binary_hash.c_str());
      return 0;
    }
    std::fprintf(stderr, "mla_bench: unknown argument %s (try --help)\n", argv[i]);
    return 2;
  }
  std::ios::sync_with_stdio(false);
  std::string error;
  const std::optional<Faults> faults = parse_faults(std::getenv("MLA_BENCH_FAULT"), &error);
  if (!faults) {
    const std::string line = error_line("MLA_BENCH_FAULT", error).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "mla_bench: %s\n", error.c_str());
    return 2;
  }
  if (faults->any()) std::fprintf(stderr, "mla_bench: test faults active (MLA_BENCH_FAULT)\n");
  return Bench(*faults).run();
}
