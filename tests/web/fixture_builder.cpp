#include "fixture_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <regex>

#include "analysis/compare.h"
#include "analysis/significance.h"
#include "analysis/summary.h"
#include "store/analysis_store.h"
#include "store/database.h"
#include "store/experiment_store.h"
#include "store/job_progress_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::web::testing {

using nlohmann::json;
using namespace perfwatch::store;

namespace {

constexpr UnixSeconds kEpoch = 1'700'000'000;

// Unwraps a store result inside build(); the error leaves through the catch.
struct Failed {
  Error error;
};
template <class R>
auto must(R&& r) {
  if (!r) throw Failed{r.error()};
  if constexpr (!std::is_void_v<typename std::decay_t<R>::value_type>) return std::move(*r);
}

json params_of(const std::string& name) {
  static const std::regex pattern(R"(bt(\d+)_w(\d+)_s(\d+))");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return json::object();
  return {{"block_t", std::stoi(m[1])}, {"num_warps", std::stoi(m[2])}, {"num_stages", std::stoi(m[3])},
          {"target_ctas", 0}};
}

std::string hypothesis_of(const std::string& name) {
  if (name.find("bt64") != std::string::npos) return "64-token tiles halve the per-tile softmax and synchronisation overhead";
  if (name.find("_w8") != std::string::npos) return "more warps and a deeper gather pipeline hide more of the gather latency";
  return "variant " + name + " is faster than the baseline";
}

// The model's time per decode step (us) of a variant at a batch, before noise.
double model_time_us(const std::string& variant, std::int64_t batch) {
  double t = 20.0 + 0.9 * static_cast<double>(batch);
  if (variant.find("_w8") != std::string::npos) t *= batch <= 8 ? 1.16 : 1.07;
  if (variant.find("bt64") != std::string::npos && batch >= 48) t *= 0.96;
  return t;
}

std::string sha_for(std::uint64_t seed, int i) {
  std::uint64_t a = std::hash<std::string>{}("a" + std::to_string(seed) + ":" + std::to_string(i));
  std::uint64_t b = std::hash<std::string>{}("b" + std::to_string(seed) + ":" + std::to_string(i));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%016llx%016llx%08x", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b), static_cast<unsigned>(i));
  return buf;
}

ChangeVerdict verdict_for(double delta, double band) {
  // time_us: lower is better, so a longer time is a regression.
  if (delta > band) return ChangeVerdict::kRegression;
  if (delta < -band) return ChangeVerdict::kImprovement;
  return ChangeVerdict::kWithinNoise;
}

ExperimentVerdict experiment_verdict(const std::vector<EvidenceRecord>& rows) {
  bool better = false, worse = false;
  for (const auto& r : rows) {
    better |= r.verdict == ChangeVerdict::kImprovement;
    worse |= r.verdict == ChangeVerdict::kRegression;
  }
  if (better && worse) return ExperimentVerdict::kMixed;
  if (better) return ExperimentVerdict::kAccepted;
  if (worse) return ExperimentVerdict::kRejected;
  return ExperimentVerdict::kNoEffect;
}

class Builder {
 public:
  Builder(Database& db, const FixtureSpec& spec, UnixSeconds& clock)
      : db_(db), spec_(spec), clock_(clock), rng_(spec.seed) {}

  FixtureInfo build() {
    RepoWriter repos(db_);
    RunWriter runs(db_);
    info_.repo_id = must(repos.ensure_repo({0, "/srv/fixture/mla-kernels", "https://example.invalid/mla-kernels.git",
                                            "mla-kernels", 0}));
    testbed_ = must(runs.ensure_testbed({0, "fixture-cpu", "fixture-host", Backend::kCpu, "fixture CPU", 0}));
    info_.testbeds.push_back(testbed_);
    if (spec_.second_testbed) {
      second_ = must(runs.ensure_testbed({0, "fixture-gpu", "fixture-gpu-host", Backend::kCuda, "fixture GPU", 0}));
      info_.testbeds.push_back(*second_);
    }
    for (auto b : spec_.batches) {
      // One axis, batch: the web's readers know no axis by name.
      std::string key = "batch=" + std::to_string(b);
      PointId id = must(runs.ensure_point({0, key, "C" + std::to_string(b), nlohmann::ordered_json{{"batch", b}}}));
      points_.push_back({id, b});
      info_.point_keys.push_back(key);
    }
    info_.variants = spec_.variants;
    info_.baseline_variant = spec_.variants.front();
    manifest_ = make_manifest();
    put_bands();

    const int n = spec_.commits;
    const int regression_at = spec_.story ? 4 : n / 2;
    const int hostile_at = 5, docs_at = 6, revert_at = 7;
    std::optional<CommitId> previous_measured;
    std::map<std::pair<std::string, PointId>, double> previous_pooled, previous_second;
    std::string previous_sha;
    for (int i = 0; i < n; ++i) {
      clock_ = kEpoch + i * 3600;
      CommitRecord c;
      c.repo_id = info_.repo_id;
      c.sha = sha_for(spec_.seed, i);
      c.parent_sha = previous_sha;
      c.author = "Kernel Engineer";
      c.email = "kernels@example.invalid";
      c.committed_at = clock_;
      c.subject = i == 0 ? "baseline: split-KV sparse MLA decode" : "kernels: tuning step " + std::to_string(i);
      bool story = spec_.story;
      bool running = story && i == n - 1;
      if (story && i == regression_at) c.subject = "gather: one cp.async stage per tile (slower)";
      if (story && i == hostile_at) {
        c.subject = kHostileSubject;
        c.author = "Mallory <b>bold</b>";
        c.perf_hypothesis = "<img src=x onerror=alert(3)>";
        c.perf_experiment = "gather-rework";
      }
      if (story && i == docs_at) c.subject = "docs: explain the split-KV combine";
      if (story && i == revert_at) c.subject = "Revert \"gather: one cp.async stage per tile (slower)\"";
      c.message = c.subject + "\n\n" +
                  (story && i == hostile_at ? "<img src=x onerror=alert(2)> & \"quotes\" 'single'\n" : "Body.\n");
      if (!c.perf_hypothesis.empty()) c.message += "\nPerf-Hypothesis: " + c.perf_hypothesis + "\n";
      c.paths_hash = "tree" + std::to_string(i);
      CommitId id = must(repos.put_commit(c));
      info_.shas.push_back(c.sha);
      previous_sha = c.sha;
      if (story && i == regression_at) info_.regression_sha = c.sha;
      if (story && i == hostile_at) info_.hostile_sha = c.sha, hostile_id_ = id;
      if (story && i == revert_at) info_.revert_sha = c.sha;

      if (story && i == docs_at) {
        info_.docs_sha = c.sha;
        must(repos.set_inherited_from(id, *previous_measured));
        finish_job(c.sha, JobState::kDone, "inherits " + previous_sha.substr(0, 10) + ": no manifest path changed");
        continue;
      }
      if (running) {
        info_.running_sha = c.sha;
        start_running(id, c.sha);
        continue;
      }
      double step = (i >= regression_at && (!story || i < revert_at)) ? (story ? 1.12 : 1.05) : 1.0;
      if (second_) {
        auto second = measure(id, c.sha, 1.0, *second_);
        if (spec_.comparisons && previous_measured) compare(id, *previous_measured, second, previous_second, false, *second_);
        previous_second = std::move(second);
      }
      auto pooled = measure(id, c.sha, step, testbed_);
      if (spec_.comparisons && previous_measured)
        compare(id, *previous_measured, pooled, previous_pooled, story && i == revert_at, testbed_);
      if (story) experiments(id, c.sha, pooled);
      if (story && i == hostile_at) trailer_experiment(id, pooled, previous_pooled);
      if (story && i == hostile_at) give_up_noise_job(c.sha);
      if (story && i == regression_at) {
        must(repos.annotate({0, id, std::nullopt, "gather rework landed; the flags below are expected", "fixture", 0}));
      }
      previous_measured = id;
      previous_pooled = pooled;
      if (spec_.verbose && i % 50 == 0) std::fprintf(stderr, "fixture: commit %d of %d, %lld trials\n", i, n, static_cast<long long>(info_.trials));
    }
    must(repos.set_branch_head(info_.repo_id, info_.branch, previous_sha));
    if (spec_.story) manual_experiment();
    return info_;
  }

 private:
  json make_manifest() const {
    json variants = json::array();
    for (std::size_t i = 0; i < spec_.variants.size(); ++i)
      variants.push_back({{"name", spec_.variants[i]}, {"params", params_of(spec_.variants[i])}, {"baseline", i == 0}});
    return {{"schema_version", 2},
            {"metrics", {{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}},
                         {{"name", "tokens_per_s"}, {"unit", "tokens/s"}, {"direction", "higher_is_better"}}}},
            {"metric", "time_us"},
            {"noise", {{"default_band", 0.05}}},
            {"runs", {{"per_commit", spec_.runs_per_commit}}},
            {"variants", variants},
            {"sweep", {{"axes", {{"batch", spec_.batches}}}, {"label", "C{batch}"}}}};
  }

  double band_of(const std::string& variant) const { return variant == info_.baseline_variant ? 0.03 : 0.05; }

  void put_bands() {
    AnalysisWriter analysis(db_);
    for (const auto& [pid, batch] : points_) {
      NoiseBandRecord b;
      b.testbed_id = testbed_;
      b.variant = info_.baseline_variant;
      b.point_id = pid;
      b.band_rel = 0.03;
      b.method = "A/A: 5 runs of one build; 95th percentile of |log ratio| between two runs";
      b.k_runs = 5;
      b.calibrated = true;
      b.source = NoiseSource::kAa;
      must(analysis.put_noise_band(b));
    }
  }

  JobId claim_job(const std::string& sha) {
    JobQueue queue(db_);
    auto enq = must(queue.enqueue({info_.repo_id, sha, info_.branch, JobKind::kBench, 0, {{"runs", spec_.runs_per_commit}}, false}));
    auto job = must(queue.claim_next());
    if (!job || job->id != enq.id) throw Failed{Error{ErrorCode::kInternal, "fixture", "claimed another job"}};
    return job->id;
  }

  void finish_job(const std::string& sha, JobState state, const std::string& message) {
    if (!spec_.story) return;
    JobId id = claim_job(sha);
    must(JobQueue(db_).finish(id, state, message));
  }

  RunId start_run(CommitId commit, std::optional<BuildId> build, std::optional<JobId> job, int r, TestbedId testbed) {
    RunRecord run;
    run.commit_id = commit;
    run.build_id = build;
    run.testbed_id = testbed;
    run.job_id = job;
    run.kind = RunKind::kBench;
    run.purpose = "commit run " + std::to_string(r + 1) + "/" + std::to_string(spec_.runs_per_commit);
    run.status = RunStatus::kRunning;
    run.started_at = clock_;
    run.seed = static_cast<std::int64_t>(spec_.seed * 1000 + r);
    const bool first = testbed == testbed_;
    run.provenance = {{"backend", first ? "cpu" : "cuda"},
                      {"device", {{"name", first ? "fixture CPU" : "fixture GPU"}}},
                      {"build_id", "fixture"}};
    run.manifest = manifest_;
    return must(RunWriter(db_).start_run(run));
  }

  std::map<std::string, VariantId> add_variants(RunId run) {
    std::map<std::string, VariantId> ids;
    for (std::size_t i = 0; i < spec_.variants.size(); ++i) {
      VariantRecord v;
      v.run_id = run;
      v.name = spec_.variants[i];
      v.params = params_of(v.name);
      v.is_baseline = i == 0;
      v.resources = {{"registers", 128}, {"shared_memory_bytes", 65536}};
      ids[v.name] = must(RunWriter(db_).add_variant(v));
    }
    return ids;
  }

  // Measures a commit: a job, a build, runs_per_commit runs with trials and
  // summaries, and the pooled value per variant x point (returned).
  std::map<std::pair<std::string, PointId>, double> measure(CommitId commit, const std::string& sha, double step,
                                                            TestbedId testbed) {
    RunWriter runs(db_);
    AnalysisWriter analysis(db_);
    std::optional<JobId> job;
    // The second testbed's runs belong to the same job (the first testbed's
    // measure() claims and finishes it).
    const bool first = testbed == testbed_;
    const double speed = first ? 1.0 : 0.6;
    if (spec_.story && first) job = claim_job(sha);
    BuildRecord build;
    build.commit_id = commit;
    build.status = BuildStatus::kOk;
    build.command = "kernels/scripts/build.sh build/kernels";
    build.exit_code = 0;
    build.duration_s = 31.5;
    build.toolchain = "g++ 12.2.0";
    build.started_at = clock_;
    build.finished_at = clock_ + 32;
    BuildId build_id = must(runs.add_build(build));

    std::normal_distribution<double> run_noise(0.0, 0.01), trial_noise(0.0, 0.005);
    std::map<std::pair<std::string, PointId>, std::vector<double>> run_medians;
    for (int r = 0; r < spec_.runs_per_commit; ++r) {
      RunId run = start_run(commit, build_id, job, r, testbed);
      auto variants = add_variants(run);
      double run_factor = 1.0 + run_noise(rng_);
      std::vector<TrialRecord> trials;
      std::vector<SummaryRecord> summaries;
      double wall_s = 0;
      for (const auto& [name, vid] : variants) {
        for (const auto& [pid, batch] : points_) {
          std::vector<double> times, tokens;
          for (int t = 1; t <= spec_.trials_per_cell; ++t) {
            double time_us = model_time_us(name, batch) * speed * step * run_factor * (1.0 + trial_noise(rng_));
            times.push_back(time_us);
            tokens.push_back(static_cast<double>(batch) / time_us * 1e6);
            TrialRecord tr;
            tr.run_id = run;
            tr.variant_id = vid;
            tr.point_id = pid;
            tr.trial_no = t;
            tr.metrics = {{"time_us", time_us}, {"tokens_per_s", static_cast<double>(batch) / time_us * 1e6}};
            tr.steps = 100;
            trials.push_back(tr);
            wall_s += time_us * 100 / 1e6;
          }
          auto s = analysis::summarize(times);
          SummaryRecord rec;
          rec.run_id = run;
          rec.variant_id = vid;
          rec.point_id = pid;
          rec.metric = "time_us";
          rec.n = s.n;
          rec.median = s.median;
          rec.ci_low = s.ci_low;
          rec.ci_high = s.ci_high;
          rec.mean = s.mean;
          rec.stddev = s.stddev;
          rec.minimum = s.min;
          rec.maximum = s.max;
          rec.stop_reason = "max_trials";
          rec.computed_at = clock_;
          summaries.push_back(rec);
          // Every declared metric is summarised; time_us is the judged one.
          auto st = analysis::summarize(tokens);
          SummaryRecord other = rec;
          other.metric = "tokens_per_s";
          other.judged = false;
          other.n = st.n;
          other.median = st.median;
          other.ci_low = st.ci_low;
          other.ci_high = st.ci_high;
          other.mean = st.mean;
          other.stddev = st.stddev;
          other.minimum = st.min;
          other.maximum = st.max;
          summaries.push_back(other);
          run_medians[{name, pid}].push_back(s.median);
        }
      }
      must(runs.insert_trials(trials));
      info_.trials += static_cast<std::int64_t>(trials.size());
      must(analysis.put_summaries(summaries));
      RunOutcome outcome;
      outcome.status = RunStatus::kOk;
      outcome.exit_code = 0;
      outcome.wall_s = wall_s + 2.0;
      outcome.finished_at = clock_ + 120 * (r + 1);
      must(runs.finish_run(run, outcome));
      info_.ok_runs.push_back(run);
    }
    if (job) must(JobQueue(db_).finish(*job, JobState::kDone, "measured"));

    // Pooled per commit as the daemon pools (daemon/judge.cpp): the geometric
    // mean of the run medians, with the 95% t interval of the log run medians.
    std::map<std::pair<std::string, PointId>, double> pooled;
    for (const auto& [key, medians] : run_medians) {
      CommitSummaryRecord cs;
      cs.commit_id = commit;
      cs.testbed_id = testbed;
      cs.variant = key.first;
      cs.point_id = key.second;
      cs.metric = "time_us";
      cs.runs = static_cast<std::int64_t>(medians.size());
      cs.geomean_of_run_medians = analysis::commit_value(medians);
      if (medians.size() >= 2) {
        std::vector<double> logs;
        for (double m : medians) logs.push_back(std::log(m));
        const analysis::TTestResult t = analysis::one_sample_t_test(logs);
        cs.ci_low = std::exp(t.difference - t.ci_halfwidth(0.95));
        cs.ci_high = std::exp(t.difference + t.ci_halfwidth(0.95));
      }
      must(analysis.put_commit_summary(cs));
      pooled[key] = cs.geomean_of_run_medians;
    }
    return pooled;
  }

  void compare(CommitId commit, CommitId against, const std::map<std::pair<std::string, PointId>, double>& now,
               const std::map<std::pair<std::string, PointId>, double>& before, bool acknowledge_one,
               TestbedId testbed) {
    AnalysisWriter analysis(db_);
    for (const auto& [key, value] : now) {
      auto prev = before.find(key);
      if (prev == before.end()) continue;
      double ratio = value / prev->second;
      double band = band_of(key.first);
      ChangeVerdict verdict = verdict_for(ratio - 1, band);
      ComparisonRecord cmp;
      cmp.commit_id = commit;
      cmp.against_commit_id = against;
      cmp.basis = ComparisonBasis::kPrevious;
      cmp.testbed_id = testbed;
      cmp.variant = key.first;
      cmp.point_id = key.second;
      cmp.metric = "time_us";
      cmp.ratio = ratio;
      cmp.ci_low = ratio * 0.985;
      cmp.ci_high = ratio * 1.015;
      cmp.p_value = verdict == ChangeVerdict::kWithinNoise ? 0.5 : 1e-4;
      cmp.band_rel = band;
      cmp.runs = spec_.runs_per_commit;
      cmp.against_runs = spec_.runs_per_commit;
      cmp.verdict = verdict;
      ComparisonId cid = must(analysis.put_comparison(cmp));
      if (verdict != ChangeVerdict::kRegression && verdict != ChangeVerdict::kImprovement) continue;
      FlagRecord f;
      f.commit_id = commit;
      f.testbed_id = testbed;
      f.variant = key.first;
      f.point_id = key.second;
      f.kind = verdict == ChangeVerdict::kRegression ? FlagKind::kRegression : FlagKind::kImprovement;
      f.magnitude_rel = ratio - 1;
      f.comparison_id = cid;
      f.detail = {{"basis", "previous"}, {"band_rel", band}};
      auto raised = must(analysis.raise_flag(f));
      bool first_point = key.second == points_.front().first && key.first == info_.baseline_variant;
      if (first_point && f.kind == FlagKind::kRegression && !info_.regression_flag) info_.regression_flag = raised.id;
      if (first_point && acknowledge_one && f.kind == FlagKind::kImprovement) {
        must(analysis.acknowledge_flag(raised.id, "expected: reverts the gather change", "fixture"));
        info_.acknowledged_flag = raised.id;
      }
    }
  }

  void experiments(CommitId commit, const std::string& sha,
                   const std::map<std::pair<std::string, PointId>, double>& pooled) {
    ExperimentWriter writer(db_);
    const std::string& base = info_.baseline_variant;
    for (const auto& name : spec_.variants) {
      if (name == base) continue;
      std::vector<EvidenceRecord> rows;
      for (const auto& [pid, batch] : points_) {
        EvidenceRecord e;
        e.candidate = name;
        e.point_id = pid;
        e.baseline_value = pooled.at({base, pid});
        e.candidate_value = pooled.at({name, pid});
        e.delta_rel = *e.candidate_value / *e.baseline_value - 1;
        e.band_rel = 0.03;
        e.verdict = verdict_for(*e.delta_rel, 0.03);
        e.p_value = e.verdict == ChangeVerdict::kWithinNoise ? 0.4 : 2e-4;
        e.runs = spec_.runs_per_commit;
        rows.push_back(e);
      }
      ExperimentRecord x;
      x.ident = "auto:" + std::to_string(info_.repo_id) + ":" + sha + ":" + name;
      x.repo_id = info_.repo_id;
      x.hypothesis = hypothesis_of(name);
      x.source = ExperimentSource::kAuto;
      x.metric = "time_us";
      x.testbed_id = testbed_;
      x.baseline = {{"variant", base}, {"params", params_of(base)}};
      x.candidates = json::array({{{"name", name}, {"params", params_of(name)}}});
      x.verdict = experiment_verdict(rows);
      ExperimentId id = must(writer.put_experiment(x));
      must(writer.set_evidence(id, rows));
      must(writer.add_ref(id, {commit, std::nullopt, "commit"}));
      if (x.verdict == ExperimentVerdict::kRejected) info_.rejected_experiment = id;
    }
  }

  void trailer_experiment(CommitId commit, const std::map<std::pair<std::string, PointId>, double>& now,
                          const std::map<std::pair<std::string, PointId>, double>& before) {
    ExperimentWriter writer(db_);
    const std::string& base = info_.baseline_variant;
    std::vector<EvidenceRecord> rows;
    for (const auto& [pid, batch] : points_) {
      EvidenceRecord e;
      e.candidate = info_.hostile_sha;
      e.point_id = pid;
      e.baseline_value = before.at({base, pid});
      e.candidate_value = now.at({base, pid});
      e.delta_rel = *e.candidate_value / *e.baseline_value - 1;
      e.band_rel = 0.03;
      e.verdict = verdict_for(*e.delta_rel, 0.03);
      e.p_value = 0.5;
      e.runs = spec_.runs_per_commit;
      rows.push_back(e);
    }
    ExperimentRecord x;
    x.ident = "trailer:" + std::to_string(info_.repo_id) + ":" + info_.hostile_sha;
    x.repo_id = info_.repo_id;
    x.hypothesis = "<img src=x onerror=alert(3)>";
    x.source = ExperimentSource::kTrailer;
    x.group_key = "gather-rework";
    x.metric = "time_us";
    x.testbed_id = testbed_;
    x.baseline = {{"commit", info_.regression_sha}};
    x.candidates = json::array({{{"commit", info_.hostile_sha}}});
    x.verdict = experiment_verdict(rows);
    ExperimentId id = must(writer.put_experiment(x));
    must(writer.set_evidence(id, rows));
    must(writer.add_ref(id, {commit, std::nullopt, "candidate"}));
  }

  void manual_experiment() {
    ExperimentWriter writer(db_);
    ExperimentRecord x;
    x.ident = "manual:num_stages3";
    x.repo_id = info_.repo_id;
    x.hypothesis = "num_stages=3 hides the gather latency at high concurrency";
    x.source = ExperimentSource::kManual;
    x.metric = "time_us";
    x.testbed_id = testbed_;
    json stages3 = params_of("bt32_w4_s3");
    x.baseline = {{"variant", info_.baseline_variant}, {"params", params_of(info_.baseline_variant)}};
    x.candidates = json::array({{{"name", "bt32_w4_s3"}, {"params", stages3}}});
    x.verdict = ExperimentVerdict::kRejected;
    std::vector<EvidenceRecord> rows;
    for (const auto& [pid, batch] : points_) {
      EvidenceRecord e;
      e.candidate = "bt32_w4_s3";
      e.point_id = pid;
      double base = model_time_us(info_.baseline_variant, batch);
      double delta = batch == 64 ? 0.11 : 0.01;
      e.baseline_value = base;
      e.candidate_value = base * (1 + delta);
      e.delta_rel = delta;
      e.band_rel = 0.03;
      e.verdict = verdict_for(delta, 0.03);
      e.p_value = batch == 64 ? 2e-4 : 0.6;
      e.runs = 3;
      rows.push_back(e);
    }
    ExperimentId id = must(writer.put_experiment(x));
    must(writer.set_evidence(id, rows));
    must(writer.conclude(id, std::nullopt, "num_stages=3 REJECTED: -9.9% throughput at C64 (time +11%); no gain elsewhere"));
    info_.manual_experiment = id;
  }

  // An A/A calibration of `sha` whose daemon was killed three times while it
  // ran: given up on (a job in state gave_up, two cut off before it).
  void give_up_noise_job(const std::string& sha) {
    JobQueue queue(db_);
    must(queue.enqueue({info_.repo_id, sha, info_.branch, JobKind::kNoise, 0, {{"runs", 10}}, false}));
    for (int crash = 0; crash < 3; ++crash) {
      auto job = must(queue.claim_next());
      if (!job || job->commit_sha != sha) throw Failed{Error{ErrorCode::kInternal, "fixture", "claimed another job"}};
      auto recovered = must(queue.recover_after_crash(3));
      if (!recovered.gave_up.empty()) info_.given_up_job = recovered.gave_up.front().id;
    }
  }

  void start_running(CommitId commit, const std::string& sha) {
    JobId job = claim_job(sha);
    RunId run = start_run(commit, std::nullopt, job, 0, testbed_);
    auto variants = add_variants(run);
    std::vector<TrialRecord> trials;
    const auto& [pid, batch] = points_.front();
    for (int t = 1; t <= spec_.trials_per_cell; ++t) {
      TrialRecord tr;
      tr.run_id = run;
      tr.variant_id = variants.at(info_.baseline_variant);
      tr.point_id = pid;
      tr.trial_no = t;
      const double time_us = model_time_us(info_.baseline_variant, batch);
      tr.metrics = {{"time_us", time_us}, {"tokens_per_s", static_cast<double>(batch) / time_us * 1e6}};
      tr.steps = 100;
      trials.push_back(tr);
    }
    must(RunWriter(db_).insert_trials(trials));
    info_.trials += static_cast<std::int64_t>(trials.size());
    info_.running_run = run;
    // What the daemon reports while it runs the bench.
    JobProgress progress;
    progress.job_id = job;
    progress.step = JobStep::kRun;
    progress.commit = sha;
    progress.measuring = sha;
    progress.run_kind = RunKind::kBench;
    progress.purpose = "run 1 of " + std::to_string(spec_.runs_per_commit) + " of " + sha.substr(0, 10);
    progress.run = 1;
    progress.runs_planned = spec_.runs_per_commit;
    progress.point_index = 1;
    progress.points = static_cast<int>(points_.size());
    progress.point = info_.point_keys.front();
    progress.variant = info_.baseline_variant;
    progress.trials = spec_.trials_per_cell;
    progress.elapsed_s = 1.5;
    must(JobProgressWriter(db_).set(progress));
  }

  Database& db_;
  const FixtureSpec& spec_;
  UnixSeconds& clock_;
  std::mt19937_64 rng_;
  FixtureInfo info_;
  TestbedId testbed_ = 0;
  std::optional<TestbedId> second_;
  CommitId hostile_id_ = 0;
  std::vector<std::pair<PointId, std::int64_t>> points_;
  json manifest_;
};

}  // namespace

json FixtureInfo::to_json() const {
  return {{"repo_id", repo_id},
          {"branch", branch},
          {"shas", shas},
          {"regression_sha", regression_sha},
          {"hostile_sha", hostile_sha},
          {"docs_sha", docs_sha},
          {"revert_sha", revert_sha},
          {"running_sha", running_sha},
          {"baseline_variant", baseline_variant},
          {"variants", variants},
          {"point_keys", point_keys},
          {"regression_flag", regression_flag},
          {"acknowledged_flag", acknowledged_flag},
          {"rejected_experiment", rejected_experiment},
          {"manual_experiment", manual_experiment},
          {"running_run", running_run},
          {"given_up_job", given_up_job},
          {"ok_runs", ok_runs},
          {"testbeds", testbeds},
          {"trials", trials},
          {"hostile_subject", kHostileSubject}};
}

Result<FixtureInfo> build_fixture(const std::filesystem::path& path, const FixtureSpec& spec) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return fail(invalid_argument(path.string(), "exists already"));
  if (spec.commits < 1 || spec.runs_per_commit < 1 || spec.trials_per_cell < 1 || spec.batches.empty() ||
      spec.variants.empty())
    return fail(invalid_argument("fixture", "commits, runs, trials, batches and variants must not be empty"));
  if (spec.story && (spec.commits < 10 || spec.variants.size() < 2))
    return fail(invalid_argument("fixture", "the story needs 10 or more commits and 2 or more variants"));
  UnixSeconds clock = kEpoch;
  OpenOptions options;
  options.clock = [&clock] { return clock; };
  auto db = Database::open(path, options);
  if (!db) return fail(db.error());
  try {
    Builder builder(*db, spec, clock);
    return builder.build();
  } catch (const Failed& f) {
    return fail(f.error);
  }
}

}  // namespace perfwatch::web::testing
