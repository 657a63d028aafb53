// detection_sim: how well perfwatch's procedure finds steps in a commit
// history at the right commit, what it flags when nothing changed, and what
// it costs in runs. Simulates the daemon's procedure exactly as analysis/
// specifies it (PROCEDURE below), plus baselines for contrast. Seeded, so the
// output is the same on every run; benchmarks/detection_sim.md has it.
//
//   detection_sim [--histories N] [--seed S] [--threads N] [procedure knobs]
//
// Model: 60 commits; a run (one bench process) has a lognormal offset with
// SD = the run noise (0.3%, 1%, 3%), shared by its 10 trials, each with 1%
// lognormal trial noise; the run's value is the median of its trials. A
// history has no step or one step of +-3%, +-5%, +-10% at a commit drawn
// uniformly from 1..59 (half of the histories up, half down).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/change_points.h"
#include "analysis/compare.h"
#include "analysis/follow_up.h"
#include "analysis/noise_band.h"
#include "analysis/random.h"
#include "analysis/significance.h"

using namespace perfwatch::analysis;

namespace {

struct Config {
  int commits = 60;
  int trials = 10;            // trials per run; the run's value is their median
  double trial_noise = 0.01;  // lognormal SD of one trial inside a run
  int aa_runs = 10;           // K: A/A runs of the first build before the history
  int histories = 300;        // per (run noise, step) cell; each step sign gets half
  std::uint64_t seed = 20240601;
  // The procedure's knobs (defaults are perfwatch's defaults).
  int initial_runs = 3;
  ComparePolicy policy;
  RunBudget budget;
  ChangePointOptions cp;
  FollowUpPolicy follow_up;
  bool use_change_points = true;
};

// One simulated point history: the true value of each commit.
struct History {
  std::vector<double> truth;
  int step_at = -1;  // first commit at the new level; -1: no step
  double step = 0;   // relative
};

class Bench {
 public:
  Bench(const Config& cfg, double run_noise, std::uint64_t seed)
      : cfg_(cfg), run_noise_(run_noise), rng_(seed) {}
  // One run (one bench process): the median of its trials. The run's offset
  // is shared by its trials; the trials scatter around it.
  double run(double truth) {
    const double offset = std::exp(run_noise_ * rng_.normal());
    trial_buf_.resize(cfg_.trials);
    for (double& t : trial_buf_) t = truth * offset * std::exp(cfg_.trial_noise * rng_.normal());
    std::sort(trial_buf_.begin(), trial_buf_.end());
    const int n = cfg_.trials;
    return n % 2 ? trial_buf_[n / 2] : 0.5 * (trial_buf_[n / 2 - 1] + trial_buf_[n / 2]);
  }
  // All trials of one run (for the naive baseline).
  std::vector<double> run_trials(double truth) {
    const double offset = std::exp(run_noise_ * rng_.normal());
    std::vector<double> out(cfg_.trials);
    for (double& t : out) t = truth * offset * std::exp(cfg_.trial_noise * rng_.normal());
    return out;
  }
  SeededRng& rng() { return rng_; }

 private:
  const Config& cfg_;
  double run_noise_;
  SeededRng rng_;
  std::vector<double> trial_buf_;
};

History make_history(const Config& cfg, double step, SeededRng& rng) {
  History h;
  h.truth.assign(cfg.commits, 100.0);
  if (step != 0) {
    h.step = step;
    h.step_at = 1 + static_cast<int>(rng.below(cfg.commits - 1));
    for (int i = h.step_at; i < cfg.commits; ++i) h.truth[i] *= 1 + step;
  }
  return h;
}

// What one procedure did on one history.
struct Outcome {
  bool found = false;      // the step flagged at its commit, in its direction
  int false_flags = 0;     // flags at commits where nothing changed
  int comparisons = 0;     // comparisons at commits where nothing changed
  long runs = 0;           // runs spent on the history's commits (A/A excluded)
  int found_by_comparison = 0, found_by_change_point = 0;
  int followed_up = 0;       // change points followed up with extra runs
  long confirm_runs = 0;     // runs spent on them
};

// PROCEDURE: what the daemon does for one variant x point, using only
// analysis/ (defaults unless a knob is given on the command line):
//  0. Calibration: K = 10 A/A runs of the first build (perfwatch noise)
//     give the band's sigma (9 df); every commit's runs add R - 1 df once
//     its successor has been compared (NoiseEvidence::add_same_build).
//  1. Each commit c gets R = 3 runs and is compared with the previous
//     benchmarked commit p: compare_runs() (pooled t on log run medians,
//     band, alpha = 0.001, within_noise on a 70% CI inside the band or 2%).
//  2. While undecided: more_runs() -- p and c both grow 3 -> 6 -> 12 runs,
//     interleaved p c p c (p's build is kept for this).
//  3. A regression/improvement verdict is a flag on c.
//  4. Then, over the per-commit geometric means of the history so far:
//     find_change_points() (E-Divisive, min segment 3, p <= 0.01, 99
//     permutations). For each change point, commits_to_reopen() names up
//     to 2 commits within 2 of it, by the likelihood of a step there given
//     every run; those whose comparison can still grow (below 24 runs a
//     side) are re-opened -- if keep_persistent() finds the change point
//     without the newest commit too -- with confirmation_runs() until
//     decided; the first flag stops the follow-up (follow_up.h).
Outcome run_perfwatch(const Config& cfg, const History& h, Bench& bench) {
  Outcome out;
  const int T = cfg.commits;
  const Direction dir = Direction::kLowerIsBetter;  // time_us
  std::vector<std::vector<double>> runs(T);
  std::vector<Comparison> cmp(T);  // cmp[k]: commit k against k - 1
  std::vector<bool> flagged(T, false), by_follow_up(T, false);

  NoiseEvidence aa;
  {
    std::vector<double> aa_runs;
    for (int k = 0; k < cfg.aa_runs; ++k) aa_runs.push_back(bench.run(h.truth[0]));
    aa.add_same_build(aa_runs);
  }
  NoiseEvidence history_evidence;
  auto band_now = [&]() {
    NoiseEvidence e = aa;
    e.merge(history_evidence);
    return noise_band(e);
  };
  auto add_runs = [&](int commit, int n) {
    for (int i = 0; i < n; ++i) runs[commit].push_back(bench.run(h.truth[commit]));
    out.runs += n;
  };
  auto is_flag = [](const Comparison& c) {
    return c.verdict == ChangeVerdict::kRegression || c.verdict == ChangeVerdict::kImprovement;
  };
  // Compare commit k with k - 1, growing both (interleaved) as asked.
  auto decide = [&](int k, bool reopen) {
    for (;;) {
      cmp[k] = compare_runs(runs[k - 1], runs[k], band_now(), dir, cfg.policy);
      const RunRequest req =
          reopen ? confirmation_runs(cmp[k], cfg.budget) : more_runs(cmp[k], cfg.budget);
      if (req.add_a == 0 && req.add_b == 0) break;
      for (int i = 0; i < std::max(req.add_a, req.add_b); ++i) {
        if (i < req.add_a) add_runs(k - 1, 1);
        if (i < req.add_b) add_runs(k, 1);
      }
    }
    if (is_flag(cmp[k])) flagged[k] = true;
  };
  auto can_grow = [&](int k) {
    return static_cast<int>(std::min(runs[k - 1].size(), runs[k].size())) <
           cfg.budget.max_runs_confirm;
  };
  auto follow_up = [&](int last) {
    std::vector<double> series(last + 1);
    for (int c = 0; c <= last; ++c) series[c] = commit_value(runs[c]);
    const std::vector<ChangePoint> cps = find_change_points(series, cfg.cp);
    const auto history = std::span<const std::vector<double>>(runs).first(last + 1);
    const auto comparisons = std::span<const Comparison>(cmp).first(last + 1);
    for (std::size_t i = 0; i < cps.size(); ++i) {
      std::vector<int> reopen = commits_to_reopen(cps, i, history, comparisons, cfg.follow_up);
      std::erase_if(reopen, [&](int k) { return !can_grow(k); });
      if (reopen.empty()) continue;
      if (keep_persistent(series, std::span<const ChangePoint>(&cps[i], 1), cfg.cp).empty()) {
        continue;
      }
      ++out.followed_up;
      const long runs_before = out.runs;
      for (int k : reopen) {
        const bool was_flagged = flagged[k];
        decide(k, /*reopen=*/true);
        if (flagged[k] && !was_flagged) by_follow_up[k] = true;
        if (flagged[k]) break;
      }
      out.confirm_runs += out.runs - runs_before;
    }
  };

  add_runs(0, cfg.initial_runs);
  for (int c = 1; c < T; ++c) {
    add_runs(c, cfg.initial_runs);
    decide(c, /*reopen=*/false);
    history_evidence.add_same_build(runs[c - 1]);
    if (cfg.use_change_points) follow_up(c);
  }

  const auto right_direction = [&](int c) {
    return (h.step > 0 && cmp[c].verdict == ChangeVerdict::kRegression) ||
           (h.step < 0 && cmp[c].verdict == ChangeVerdict::kImprovement);
  };
  for (int c = 1; c < T; ++c) {
    if (c == h.step_at) continue;
    ++out.comparisons;
    if (flagged[c]) ++out.false_flags;
  }
  if (h.step_at > 0 && flagged[h.step_at] && right_direction(h.step_at)) {
    out.found = true;
    (by_follow_up[h.step_at] ? out.found_by_change_point : out.found_by_comparison) = 1;
  }
  if (std::getenv("DETECTION_SIM_DEBUG") && h.step_at > 0 && !out.found) {
    const int s = h.step_at;
    std::fprintf(stderr, "%smiss step %+g at %d: verdict %s runs %zu/%zu ratio %.4f p %.2g;",
                 cfg.use_change_points ? "" : "(comparisons only) ",
                 h.step, s, to_string(cmp[s].verdict), runs[s - 1].size(), runs[s].size(),
                 cmp[s].ratio, cmp[s].p_value);
    std::vector<double> series(T);
    for (int c = 0; c < T; ++c) series[c] = commit_value(runs[c]);
    for (const ChangePoint& cp : find_change_points(series, cfg.cp)) {
      std::fprintf(stderr, " cp %d (p %.3f)", cp.index, cp.p_value);
    }
    for (int c = 1; c < T; ++c) if (flagged[c]) std::fprintf(stderr, " flag %d", c);
    std::fprintf(stderr, "\n");
  }
  return out;
}

// Baseline 1: one run per commit, flag when the ratio to the previous run
// is outside a fixed +-5%.
Outcome run_fixed_threshold(const Config& cfg, const History& h, Bench& bench) {
  Outcome out;
  std::vector<double> v(cfg.commits);
  for (int c = 0; c < cfg.commits; ++c) v[c] = bench.run(h.truth[c]);
  out.runs = cfg.commits;
  for (int c = 1; c < cfg.commits; ++c) {
    const double r = v[c] / v[c - 1] - 1;
    const bool flag = std::fabs(r) > 0.05;
    if (c == h.step_at) {
      out.found = flag && (r > 0) == (h.step > 0);
    } else {
      ++out.comparisons;
      out.false_flags += flag;
    }
  }
  return out;
}

// Baseline 2: one run per commit, Mann-Whitney over the pooled trials of the
// two runs, flag at p < 0.05 -- the invalid test compare.h explains.
Outcome run_naive_rank(const Config& cfg, const History& h, Bench& bench) {
  Outcome out;
  std::vector<std::vector<double>> t(cfg.commits);
  for (int c = 0; c < cfg.commits; ++c) t[c] = bench.run_trials(h.truth[c]);
  out.runs = cfg.commits;
  for (int c = 1; c < cfg.commits; ++c) {
    const MannWhitneyResult mw = mann_whitney_u(t[c - 1], t[c]);
    const bool flag = mw.p_value < 0.05;
    if (c == h.step_at) {
      const bool up = mw.u < cfg.trials * cfg.trials / 2.0;  // U counts t[c-1] > t[c]
      out.found = flag && up == (h.step > 0);
    } else {
      ++out.comparisons;
      out.false_flags += flag;
    }
  }
  return out;
}

struct Cell {
  long histories = 0, found = 0, by_cmp = 0, by_cp = 0;
  long false_flags = 0, comparisons = 0, runs = 0, commits = 0;
  long followed_up = 0, confirm_runs = 0;
};

template <class Procedure>
Cell simulate(const Config& cfg, double run_noise, double step_mag, std::uint64_t seed,
              Procedure procedure) {
  Cell cell;
  SeededRng hist_rng(seed);
  Bench bench(cfg, run_noise, seed ^ 0x9e3779b97f4a7c15ULL);
  for (int i = 0; i < cfg.histories; ++i) {
    const double step = step_mag == 0 ? 0 : (i % 2 == 0 ? step_mag : -step_mag);
    const History h = make_history(cfg, step, hist_rng);
    const Outcome o = procedure(cfg, h, bench);
    ++cell.histories;
    cell.found += o.found;
    cell.by_cmp += o.found_by_comparison;
    cell.by_cp += o.found_by_change_point;
    cell.false_flags += o.false_flags;
    cell.comparisons += o.comparisons;
    cell.runs += o.runs;
    cell.followed_up += o.followed_up;
    cell.confirm_runs += o.confirm_runs;
    cell.commits += cfg.commits;
  }
  return cell;
}

bool arg(int& i, int argc, char** argv, const char* name, double& out) {
  if (std::strcmp(argv[i], name) != 0 || i + 1 >= argc) return false;
  out = std::atof(argv[++i]);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  int threads = 2;
  for (int i = 1; i < argc; ++i) {
    double v = 0;
    if (arg(i, argc, argv, "--histories", v)) cfg.histories = static_cast<int>(v);
    else if (arg(i, argc, argv, "--seed", v)) cfg.seed = static_cast<std::uint64_t>(v);
    else if (arg(i, argc, argv, "--threads", v)) threads = std::max(1, static_cast<int>(v));
    else if (arg(i, argc, argv, "--alpha", v)) cfg.policy.alpha = v;
    else if (arg(i, argc, argv, "--eq-level", v)) cfg.policy.equivalence_level = v;
    else if (arg(i, argc, argv, "--margin", v)) cfg.policy.margin_fraction = v;
    else if (arg(i, argc, argv, "--min-effect", v)) cfg.policy.min_effect_rel = v;
    else if (arg(i, argc, argv, "--max-runs", v)) cfg.budget.max_runs = static_cast<int>(v);
    else if (arg(i, argc, argv, "--growth", v)) cfg.budget.growth = v;
    else if (arg(i, argc, argv, "--runs", v)) cfg.initial_runs = static_cast<int>(v);
    else if (arg(i, argc, argv, "--aa-runs", v)) cfg.aa_runs = static_cast<int>(v);
    else if (arg(i, argc, argv, "--cp-p", v)) cfg.cp.max_p = v;
    else if (arg(i, argc, argv, "--cp-permutations", v)) cfg.cp.permutations = static_cast<int>(v);
    else if (arg(i, argc, argv, "--cp-min-seg", v)) cfg.cp.min_segment = static_cast<int>(v);
    else if (arg(i, argc, argv, "--confirm-runs", v)) cfg.budget.max_runs_confirm = static_cast<int>(v);
    else if (arg(i, argc, argv, "--confirm-candidates", v)) cfg.follow_up.max_candidates = static_cast<int>(v);
    else if (arg(i, argc, argv, "--confirm-window", v)) cfg.follow_up.window = static_cast<int>(v);
    else {
      std::fprintf(stderr,
                   "detection_sim: unknown or incomplete option %s\n"
                   "options: --histories N --seed S --threads N and the procedure's knobs "
                   "(--alpha --eq-level --margin --min-effect --max-runs --growth --runs "
                   "--aa-runs --cp-p --cp-permutations --cp-min-seg --confirm-runs "
                   "--confirm-candidates --confirm-window)\n",
                   argv[i]);
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();

  // Every cell is an independent job with its own seed, so the output does
  // not depend on the number of threads.
  enum Kind { kPerfwatch, kNoChangePoints, kFixedThreshold, kNaiveRank };
  struct Job {
    Kind kind;
    double noise, step;
    std::uint64_t seed;
    Cell result;
  };
  std::vector<Job> jobs;
  const double noises[] = {0.003, 0.01, 0.03};
  const double steps[] = {0.0, 0.03, 0.05, 0.10};
  std::uint64_t seed = cfg.seed;
  for (double noise : noises)
    for (double step : steps) jobs.push_back({kPerfwatch, noise, step, seed++, {}});
  for (double step : {0.0, 0.05}) {
    jobs.push_back({kNoChangePoints, 0.03, step, seed++, {}});
    jobs.push_back({kFixedThreshold, 0.03, step, seed++, {}});
    jobs.push_back({kNaiveRank, 0.03, step, seed++, {}});
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&]() {
    for (std::size_t j; (j = next++) < jobs.size();) {
      Job& job = jobs[j];
      switch (job.kind) {
        case kPerfwatch:
          job.result = simulate(cfg, job.noise, job.step, job.seed, run_perfwatch);
          break;
        case kNoChangePoints: {
          Config alone = cfg;
          alone.use_change_points = false;
          job.result = simulate(alone, job.noise, job.step, job.seed, run_perfwatch);
          break;
        }
        case kFixedThreshold:
          job.result = simulate(cfg, job.noise, job.step, job.seed, run_fixed_threshold);
          break;
        case kNaiveRank:
          job.result = simulate(cfg, job.noise, job.step, job.seed, run_naive_rank);
          break;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();

  auto pct = [](long part, long whole) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * part / whole);
    return std::string(buf);
  };
  std::printf("| run noise | step | histories | found at right commit | by comparison | by change point + follow-up | false flags / 1000 cmp | runs / commit | GPU time vs 3 runs/commit | change points followed up / history | follow-up runs / commit |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (double noise : noises) {
    Cell all;
    for (const Job& job : jobs) {
      if (job.kind != kPerfwatch || job.noise != noise) continue;
      const Cell& c = job.result;
      all.false_flags += c.false_flags;
      all.comparisons += c.comparisons;
      all.runs += c.runs;
      all.commits += c.commits;
      const double rpc = double(c.runs) / c.commits;
      const bool step = job.step != 0;
      std::printf("| %.1f%% | %s | %ld | %s | %s | %s | %.2f | %.2f | %.2fx | %.2f | %.2f |\n",
                  100 * noise, step ? ("+-" + std::to_string(int(100 * job.step + 0.5)) + "%").c_str() : "none",
                  c.histories, step ? pct(c.found, c.histories).c_str() : "-",
                  step ? pct(c.by_cmp, c.histories).c_str() : "-",
                  step ? pct(c.by_cp, c.histories).c_str() : "-",
                  1000.0 * c.false_flags / c.comparisons, rpc, rpc / 3.0,
                  double(c.followed_up) / c.histories, double(c.confirm_runs) / c.commits);
    }
    std::printf("| %.1f%% | all | | | | | **%.2f** of %ld | %.2f | %.2fx | | |\n", 100 * noise,
                1000.0 * all.false_flags / all.comparisons, all.comparisons,
                double(all.runs) / all.commits, double(all.runs) / all.commits / 3.0);
  }

  std::printf("\nFor contrast, at 3%% run noise:\n\n");
  std::printf("| procedure | step | found at right commit | false flags / 1000 cmp | runs / commit |\n|---|---|---|---|---|\n");
  const char* names[] = {"", "perfwatch without change points (comparisons only)",
                         "fixed +-5% threshold on single runs",
                         "Mann-Whitney on the pooled trials of single runs, p < 0.05"};
  for (Kind kind : {kNoChangePoints, kFixedThreshold, kNaiveRank}) {
    for (const Job& job : jobs) {
      if (job.kind != kind) continue;
      const Cell& c = job.result;
      std::printf("| %s | %s | %s | %.1f | %.2f |\n", names[kind],
                  job.step != 0 ? "+-5%" : "none",
                  job.step != 0 ? pct(c.found, c.histories).c_str() : "-",
                  1000.0 * c.false_flags / c.comparisons, double(c.runs) / c.commits);
    }
  }

  // Cost of change-point detection on a long history: 1000 commits with
  // three steps, the whole history and the daemon's trailing window of 100.
  {
    SeededRng rng(cfg.seed);
    std::vector<double> long_history(1000);
    for (int i = 0; i < 1000; ++i) {
      const double level = i < 300 ? 100 : i < 620 ? 105 : i < 950 ? 99 : 103;
      long_history[i] = level * std::exp(0.0175 * rng.normal());
    }
    auto time_ms = [&](std::span<const double> v, int repeat) {
      const auto t0 = std::chrono::steady_clock::now();
      std::size_t found = 0;
      for (int r = 0; r < repeat; ++r) found = find_change_points(v, cfg.cp).size();
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - t0).count() / repeat;
      return std::make_pair(ms, found);
    };
    const auto [all_ms, all_found] = time_ms(long_history, 3);
    const auto [win_ms, win_found] =
        time_ms(std::span<const double>(long_history).last(100), 20);
    std::printf("\nChange-point detection cost (this machine, one thread): 1000-commit history "
                "with 3 steps at 1.75%% noise per commit: %.1f ms (%zu change points found); "
                "trailing window of 100 commits: %.2f ms (%zu found).\n",
                all_ms, all_found, win_ms, win_found);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "detection_sim: %.1f s wall\n", secs);
  return 0;
}
