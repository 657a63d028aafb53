// Every kind of record goes in through the writers and comes back, field
// for field, through the readers.
#include <gtest/gtest.h>

#include "store/analysis_store.h"
#include "store/experiment_store.h"
#include "store/migrations.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

class RoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Database::open(tmp_.path(), {.clock = [this] { return now_; }});
    ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
    db_ = std::make_unique<Database>(std::move(*opened));
  }
  TempDbPath tmp_;
  UnixSeconds now_ = 1'700'000'000;
  std::unique_ptr<Database> db_;
};

TEST_F(RoundTrip, RepoBranchCommitAnnotation) {
  RepoWriter w(*db_);
  RepoReader r(*db_);
  RepoRecord repo{.path = "/src/mla", .url = "git@example.com:mla.git", .name = "mla"};
  PW_UNWRAP(repo_id, w.ensure_repo(repo));
  repo.id = repo_id;
  repo.created_at = now_;
  PW_UNWRAP(got_repo, r.repo(repo_id));
  EXPECT_EQ(got_repo, repo);
  // Same path: same id, url updated.
  repo.url = "https://example.com/mla.git";
  PW_UNWRAP(again, w.ensure_repo(repo));
  EXPECT_EQ(again, repo_id);
  PW_UNWRAP(found, r.find_repo("/src/mla"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->url, repo.url);

  PW_ASSERT_OK(w.set_branch_head(repo_id, "main", testing::sha_of(1)));
  now_ += 10;
  PW_ASSERT_OK(w.set_branch_head(repo_id, "main", testing::sha_of(2)));
  PW_UNWRAP(branch, r.branch(repo_id, "main"));
  ASSERT_TRUE(branch.has_value());
  EXPECT_EQ(*branch, (BranchRecord{repo_id, "main", testing::sha_of(2), now_ - 10, now_}));
  PW_UNWRAP(branches, r.branches(repo_id));
  EXPECT_EQ(branches.size(), 1u);

  CommitRecord parent{.repo_id = repo_id, .sha = testing::sha_of(1), .subject = "root"};
  PW_UNWRAP(parent_id, w.put_commit(parent));
  CommitRecord c{.repo_id = repo_id,
                 .sha = testing::sha_of(2),
                 .parent_sha = testing::sha_of(1),
                 .author = "Ada",
                 .email = "ada@example.com",
                 .committed_at = 1'690'000'000,
                 .subject = "Try num_warps=8",
                 .message = "Try num_warps=8\n\nPerf-Hypothesis: more warps hide latency\nPerf-Experiment: warps-1\n",
                 .paths_hash = "tree:abc",
                 .perf_hypothesis = "more warps hide latency",
                 .perf_experiment = "warps-1"};
  PW_UNWRAP(commit_id, w.put_commit(c));
  c.id = commit_id;
  c.recorded_at = now_;
  PW_UNWRAP(got, r.commit(commit_id));
  EXPECT_EQ(got, c);
  PW_UNWRAP(by_prefix, r.resolve_commit(repo_id, testing::sha_of(2).substr(0, 40)));
  EXPECT_EQ(by_prefix.id, commit_id);
  // Both shas share their first 30 digits: a short prefix is ambiguous.
  auto ambiguous = r.resolve_commit(repo_id, testing::sha_of(2).substr(0, 30));
  ASSERT_FALSE(ambiguous.has_value());
  EXPECT_EQ(ambiguous.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.resolve_commit(repo_id, "ffff").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.resolve_commit(repo_id, "XYZW").error().code, ErrorCode::kInvalidArgument);

  // Inheritance resolves to the commit with results of its own.
  CommitRecord docs{.repo_id = repo_id, .sha = testing::sha_of(3), .parent_sha = testing::sha_of(2)};
  PW_UNWRAP(docs_id, w.put_commit(docs));
  CommitRecord docs2{.repo_id = repo_id, .sha = testing::sha_of(4), .parent_sha = testing::sha_of(3)};
  PW_UNWRAP(docs2_id, w.put_commit(docs2));
  PW_ASSERT_OK(w.set_inherited_from(docs_id, commit_id));
  PW_ASSERT_OK(w.set_inherited_from(docs2_id, docs_id));
  EXPECT_EQ(r.commit(docs2_id)->inherited_from, commit_id);
  EXPECT_EQ(w.set_inherited_from(commit_id, commit_id).error().code, ErrorCode::kInvalidArgument);
  // put_commit again keeps the inheritance it is not told about.
  PW_ASSERT_OK(w.put_commit(docs));
  EXPECT_EQ(r.commit(docs_id)->inherited_from, commit_id);
  (void)parent_id;

  AnnotationRecord note{.commit_id = commit_id, .text = "rebased onto main", .author = "bob"};
  PW_UNWRAP(note_id, w.annotate(note));
  note.id = note_id;
  note.at = now_;
  PW_UNWRAP(notes, r.annotations_of_commit(commit_id));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], note);
  EXPECT_FALSE(w.annotate({.text = "about nothing"}).has_value());
}

TEST_F(RoundTrip, TestbedBuildRunVariantPointCheckTrialSummary) {
  RepoWriter repos(*db_);
  RunWriter w(*db_);
  RunReader r(*db_);
  AnalysisWriter analysis(*db_);
  PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
  PW_UNWRAP(commit, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));

  TestbedRecord tb{.name = "h200-a/cuda", .hostname = "h200-a", .backend = Backend::kCuda, .device_name = "NVIDIA H200"};
  PW_UNWRAP(tb_id, w.ensure_testbed(tb));
  tb.id = tb_id;
  tb.created_at = now_;
  EXPECT_EQ(*r.testbed(tb_id), tb);
  EXPECT_EQ(*w.ensure_testbed(tb), tb_id);
  auto moved = tb;
  moved.device_name = "NVIDIA B200";
  EXPECT_EQ(w.ensure_testbed(moved).error().code, ErrorCode::kInvalidArgument);

  BuildRecord build{.commit_id = commit,
                    .status = BuildStatus::kFailed,
                    .command = "cmake --build build",
                    .exit_code = 2,
                    .duration_s = 12.5,
                    .log_tail = "error: expected ';'",
                    .log_path = "/var/pw/logs/b1.log",
                    .toolchain = "g++ 12.2.0; nvcc 12.4",
                    .started_at = 100,
                    .finished_at = 113};
  PW_UNWRAP(build_id, w.add_build(build));
  build.id = build_id;
  EXPECT_EQ(*r.build(build_id), build);
  EXPECT_EQ(r.builds_of_commit(commit)->size(), 1u);

  RunRecord run{.commit_id = commit,
                .build_id = build_id,
                .testbed_id = tb_id,
                .kind = RunKind::kBaselineRerun,
                .purpose = "A B A B: baseline re-run 2/3",
                .status = RunStatus::kRunning,
                .log_path = "/var/pw/logs/r1.log",
                .started_at = 200,
                .manifest = {{"metric", "time_us"}}};
  PW_UNWRAP(run_id, w.start_run(run));
  run.id = run_id;
  nlohmann::json provenance = {{"device", {{"name", "NVIDIA H200"}, {"sm_clock_mhz", 1980}}},
                               {"env", {{"CUDA_VISIBLE_DEVICES", "0"}}}};
  PW_ASSERT_OK(w.set_provenance(run_id, tb_id, provenance, 1234));
  run.provenance = provenance;
  run.seed = 1234;
  EXPECT_EQ(*r.run(run_id), run);

  VariantRecord base{.run_id = run_id, .name = "base", .params = {{"block_t", 64}, {"num_warps", 4}}, .is_baseline = true,
                     .resources = {{"kernels", nlohmann::json::array({{{"registers_per_thread", 128}}})}}};
  PW_UNWRAP(base_id, w.add_variant(base));
  base.id = base_id;
  VariantRecord wide{.run_id = run_id, .name = "w8", .params = {{"num_warps", 8}},
                     .status = VariantStatus::kInfeasible, .reason = "needs 300 KB of shared memory"};
  PW_UNWRAP(wide_id, w.add_variant(wide));
  wide.id = wide_id;
  PW_UNWRAP(variants, r.variants(run_id));
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0], base);
  EXPECT_EQ(variants[1], wide);
  EXPECT_FALSE(w.add_variant({.run_id = run_id, .name = "base"}).has_value());               // same name
  EXPECT_FALSE(w.add_variant({.run_id = run_id, .name = "b2", .is_baseline = true}).has_value());  // second baseline

  PointRecord point = testing::point_record(64);
  point.key = "batch=64,context_rows=8192,mode=fast,scale=0.5";
  point.axes = {{"batch", 64}, {"mode", "fast"}, {"context_rows", 8192}, {"scale", 0.5}};
  PW_UNWRAP(point_id, w.ensure_point(point));
  point.id = point_id;
  EXPECT_EQ(*r.point(point_id), point);
  EXPECT_EQ(r.point(point_id)->axes.begin().key(), "batch") << "the axes come back in the order they were given";
  EXPECT_EQ(nlohmann::json(r.point(point_id)->axes).dump(), R"({"batch":64,"context_rows":8192,"mode":"fast","scale":0.5})");
  EXPECT_EQ(*w.ensure_point(point), point_id);
  // The same key with another label: the same point, renamed.
  auto renamed = point;
  renamed.label = "C64-fast";
  EXPECT_EQ(*w.ensure_point(renamed), point_id);
  EXPECT_EQ(r.point(point_id)->label, "C64-fast");
  auto bad = point;
  bad.key = "batch=65";
  bad.axes = nlohmann::ordered_json::array();
  EXPECT_EQ(w.ensure_point(bad).error().code, ErrorCode::kInvalidArgument);

  CheckRecord check{.run_id = run_id, .variant_id = base_id, .point_id = point_id, .status = CheckStatus::kOk,
                    .rel_l2_o = 0.002, .max_abs_lse = 1e-5, .detail = {{"launch", {{"nsplit", 4}}}}};
  PW_ASSERT_OK(w.record_check(check));
  EXPECT_EQ(r.checks(run_id)->at(0), check);
  check.status = CheckStatus::kIncorrect;
  check.reason = "rel_l2_o 0.3 > 0.01";
  check.rel_l2_o = std::nullopt;  // NaN
  PW_ASSERT_OK(w.record_check(check));  // replaces
  PW_UNWRAP(checks, r.checks(run_id));
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0], check);

  TrialRecord trial = testing::trial_record(run_id, base_id, point_id, 1, 41.5);
  trial.sm_clock_mhz = 1755.0;
  trial.throttled = true;
  PW_ASSERT_OK(w.insert_trial(trial));
  TrialRecord second = testing::trial_record(run_id, base_id, point_id, 2, 40.0);
  PW_ASSERT_OK(w.insert_trial(second));
  PW_UNWRAP(trials, r.trials(run_id, base_id, point_id));
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0], trial);
  EXPECT_EQ(trials[1], second);
  EXPECT_EQ(w.insert_trial(trial).error().code, ErrorCode::kInvalidArgument);  // trial 1 again
  EXPECT_EQ(*r.trial_count(run_id), 2);

  SummaryRecord summary{.run_id = run_id, .variant_id = base_id, .point_id = point_id, .metric = "time_us", .n = 2,
                        .median = 40.75, .ci_low = 40.0, .ci_high = 41.5, .mean = 40.75, .stddev = 1.06,
                        .minimum = 40.0, .maximum = 41.5, .dropped_throttled = 1, .stop_reason = "max_trials"};
  PW_ASSERT_OK(analysis.put_summary(summary));
  summary.computed_at = now_;
  EXPECT_EQ(r.summaries(run_id)->at(0), summary);

  RunOutcome outcome{.status = RunStatus::kCrashed, .exit_code = std::nullopt, .signal = 11,
                     .message = "bench died on SIGSEGV after 2 trials", .stdout_tail = "{\"kind\":\"trial\"...}",
                     .stderr_tail = "Segmentation fault", .wall_s = 3.25, .finished_at = 204};
  PW_ASSERT_OK(w.finish_run(run_id, outcome));
  PW_UNWRAP(finished, r.run(run_id));
  EXPECT_EQ(finished.status, RunStatus::kCrashed);
  EXPECT_EQ(finished.signal, 11);
  EXPECT_EQ(finished.message, outcome.message);
  EXPECT_EQ(finished.stdout_tail, outcome.stdout_tail);
  EXPECT_EQ(finished.stderr_tail, outcome.stderr_tail);
  EXPECT_EQ(finished.wall_s, 3.25);
  EXPECT_EQ(finished.finished_at, 204);
  EXPECT_EQ(finished.trial_count, 2);
  // Trials measured before the crash are all still there.
  EXPECT_EQ(r.trials(run_id)->size(), 2u);
  // A finished run does not finish again.
  EXPECT_EQ(w.finish_run(run_id, outcome).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(w.finish_run(999, outcome).error().code, ErrorCode::kNotFound);

  // The same commit benchmarked again is a second run.
  PW_UNWRAP(second_run, w.start_run({.commit_id = commit}));
  EXPECT_NE(second_run, run_id);
  EXPECT_EQ(r.runs_of_commit(commit)->size(), 2u);
}

TEST_F(RoundTrip, CommitSummaryNoiseBandComparisonFlag) {
  RepoWriter repos(*db_);
  RunWriter runs(*db_);
  AnalysisWriter w(*db_);
  AnalysisReader r(*db_);
  PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
  PW_UNWRAP(c1, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1), .subject = "one"}));
  PW_UNWRAP(c2, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(2), .subject = "two"}));
  PW_UNWRAP(tb, runs.ensure_testbed({.name = "cpu", .backend = Backend::kCpu}));
  PW_UNWRAP(p, runs.ensure_point(testing::point_record(8)));

  CommitSummaryRecord cs{.commit_id = c2, .testbed_id = tb, .variant = "base", .point_id = p, .metric = "time_us",
                         .runs = 3, .geomean_of_run_medians = 12.5, .ci_low = 12.0, .ci_high = 13.0};
  PW_ASSERT_OK(w.put_commit_summary(cs));
  cs.updated_at = now_;
  EXPECT_EQ(*r.commit_summary(c2, tb, "base", p), cs);
  cs.runs = 5;
  PW_ASSERT_OK(w.put_commit_summary(cs));
  EXPECT_EQ(r.commit_summaries(c2)->size(), 1u);
  EXPECT_EQ(r.commit_summary(c2, tb, "base", p)->value().runs, 5);

  NoiseBandRecord band{.testbed_id = tb, .variant = "base", .point_id = p, .band_rel = 0.031,
                       .method = "A/A: 95th percentile of |log ratio| over K=6 runs, 15 pairs", .k_runs = 6,
                       .calibrated = true, .source = NoiseSource::kAa};
  PW_ASSERT_OK(w.put_noise_band(band));
  band.updated_at = now_;
  EXPECT_EQ(*r.noise_band(tb, "base", p), band);
  EXPECT_EQ(r.noise_bands(tb)->size(), 1u);
  EXPECT_FALSE(w.put_noise_band({.testbed_id = tb, .variant = "x", .point_id = p, .band_rel = -1}).has_value());

  ComparisonRecord cmp{.commit_id = c2, .against_commit_id = c1, .basis = ComparisonBasis::kPrevious,
                       .testbed_id = tb, .variant = "base", .point_id = p, .metric = "time_us", .ratio = 1.12,
                       .ci_low = 1.08, .ci_high = 1.16, .p_value = 0.004, .band_rel = 0.031, .runs = 3,
                       .against_runs = 3, .verdict = ChangeVerdict::kRegression};
  PW_UNWRAP(cmp_id, w.put_comparison(cmp));
  cmp.id = cmp_id;
  cmp.updated_at = now_;
  EXPECT_EQ(*r.comparison(cmp_id), cmp);
  cmp.runs = 5;
  PW_UNWRAP(same_id, w.put_comparison(cmp));  // recomputed with more runs: same row
  EXPECT_EQ(same_id, cmp_id);
  EXPECT_EQ(r.comparisons_of_commit(c2)->size(), 1u);

  FlagRecord flag{.commit_id = c2, .testbed_id = tb, .variant = "base", .point_id = p, .kind = FlagKind::kRegression,
                  .magnitude_rel = 0.12, .comparison_id = cmp_id, .detail = {{"p_value", 0.004}}};
  PW_UNWRAP(raised, w.raise_flag(flag));
  EXPECT_TRUE(raised.created);
  flag.id = raised.id;
  flag.created_at = now_;
  PW_UNWRAP(view, r.flag(raised.id));
  EXPECT_EQ(view.flag, flag);
  EXPECT_EQ(view.sha, testing::sha_of(2));
  EXPECT_EQ(view.subject, "two");
  EXPECT_EQ(view.point_key, "batch=8");
  now_ += 5;
  flag.magnitude_rel = 0.13;
  PW_UNWRAP(again, w.raise_flag(flag));
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.id, raised.id);
  EXPECT_EQ(r.flag(raised.id)->flag.magnitude_rel, 0.13);
  EXPECT_EQ(r.flag(raised.id)->flag.created_at, now_ - 5);

  PW_ASSERT_OK(w.acknowledge_flag(raised.id, "expected: trades C1 for C96", "ada"));
  PW_UNWRAP(acked, r.flag(raised.id));
  ASSERT_TRUE(acked.flag.acknowledged.has_value());
  EXPECT_EQ(*acked.flag.acknowledged, (Acknowledgement{"expected: trades C1 for C96", "ada", now_}));
  EXPECT_EQ(w.acknowledge_flag(raised.id, "", "ada").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(w.acknowledge_flag(999, "x", "ada").error().code, ErrorCode::kNotFound);
}

TEST_F(RoundTrip, ExperimentEvidenceAndRefs) {
  RepoWriter repos(*db_);
  RunWriter runs(*db_);
  ExperimentWriter w(*db_);
  ExperimentReader r(*db_);
  PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
  PW_UNWRAP(c1, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
  PW_UNWRAP(run, runs.start_run({.commit_id = c1}));
  PW_UNWRAP(p1, runs.ensure_point(testing::point_record(1)));
  PW_UNWRAP(p64, runs.ensure_point(testing::point_record(64)));
  PW_UNWRAP(tb, runs.ensure_testbed({.name = "cpu", .backend = Backend::kCpu}));

  ExperimentRecord e{.ident = "auto:" + testing::sha_of(1) + ":w8",
                     .repo_id = repo,
                     .hypothesis = "num_warps=8 hides more latency",
                     .source = ExperimentSource::kAuto,
                     .metric = "time_us",
                     .testbed_id = tb,
                     .baseline = {{"variant", "base"}, {"params", {{"num_warps", 4}}}},
                     .candidates = nlohmann::json::array({{{"name", "w8"}, {"params", {{"num_warps", 8}}}}}),
                     .verdict = ExperimentVerdict::kRejected,
                     .conclusion = "",
                     .refs = {{.commit_id = c1, .role = "candidate"}, {.run_id = run, .role = "evidence"}}};
  PW_UNWRAP(id, w.put_experiment(e));
  e.id = id;
  e.created_at = now_;
  e.updated_at = now_;
  std::vector<EvidenceRecord> evidence = {
      {.experiment_id = id, .candidate = "w8", .point_id = p64, .baseline_value = 40.0, .candidate_value = 46.0,
       .delta_rel = 0.15, .band_rel = 0.03, .p_value = 0.01, .runs = 3, .verdict = ChangeVerdict::kRegression},
      {.experiment_id = id, .candidate = "w8", .point_id = p1, .baseline_value = 10.0, .candidate_value = 11.6,
       .delta_rel = 0.16, .band_rel = 0.03, .p_value = 0.02, .runs = 3, .verdict = ChangeVerdict::kRegression}};
  PW_ASSERT_OK(w.set_evidence(id, evidence));
  PW_UNWRAP(detail, r.experiment(id));
  // refs come back ordered by role: candidate, evidence
  EXPECT_EQ(detail.experiment, e);
  ASSERT_EQ(detail.evidence.size(), 2u);
  EXPECT_EQ(detail.evidence[0].evidence, evidence[1]);  // b1 before b64
  EXPECT_EQ(detail.evidence[0].point_key, "batch=1");
  EXPECT_EQ(detail.evidence[1].evidence, evidence[0]);

  // A person concludes; a re-analysis under the same ident keeps the words.
  now_ += 60;
  PW_ASSERT_OK(w.conclude(id, std::nullopt, "REJECTED: -14..-18% at low C"));
  auto reanalysed = e;
  reanalysed.refs.clear();
  reanalysed.conclusion = "";
  PW_UNWRAP(same, w.put_experiment(reanalysed));
  EXPECT_EQ(same, id);
  PW_UNWRAP(after, r.find_by_ident(e.ident));
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->conclusion, "REJECTED: -14..-18% at low C");
  EXPECT_EQ(after->verdict, ExperimentVerdict::kRejected);
  EXPECT_EQ(after->refs.size(), 2u);
  EXPECT_EQ(after->updated_at, now_);
  EXPECT_EQ(w.conclude(999, std::nullopt, "x").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(w.set_evidence(999, evidence).error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(w.put_experiment({.hypothesis = ""}).has_value());
}

TEST_F(RoundTrip, Job) {
  RepoWriter repos(*db_);
  JobQueue q(*db_);
  JobReader r(*db_);
  PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
  PW_UNWRAP(enq, q.enqueue({.repo_id = repo, .commit_sha = testing::sha_of(1), .branch = "main",
                            .kind = JobKind::kNoise, .priority = 5, .options = {{"runs", 6}}}));
  EXPECT_TRUE(enq.created);
  JobRecord expected{.id = enq.id, .repo_id = repo, .commit_sha = testing::sha_of(1), .branch = "main",
                     .kind = JobKind::kNoise, .state = JobState::kQueued, .priority = 5, .options = {{"runs", 6}},
                     .enqueued_at = now_};
  EXPECT_EQ(*r.job(enq.id), expected);
}

// Version 9 gives a run whose results could not be stored a status of its
// own; runs of version 8 marked so in their message move to it, every row
// and what refers to it kept.
TEST(RunMigration, StoreFailedRunsOfVersion8GetTheirOwnStatusAndEveryRowIsKept) {
  TempDbPath tmp;
  RunId store_failed = 0, failed = 0;
  VariantId variant = 0;
  {
    PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 8}));
    PW_UNWRAP(repo, RepoWriter(db).ensure_repo({.path = "/r", .name = "r"}));
    PW_UNWRAP(commit, RepoWriter(db).put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
    // Runs as version 8 wrote them (start_run now writes columns of version 10).
    const std::string c = std::to_string(commit);
    testing::raw_exec(tmp.path(),
                      "INSERT INTO runs (id, commit_id, kind, purpose, status, message, started_at) VALUES "
                      "(11, " + c + ", 'bench', 'run 1 of 3', 'failed', 'store_failed: disk full: insert a trial', 100), "
                      "(12, " + c + ", 'bench', 'run 2 of 3', 'failed', 'the bench failed', 100)");
    store_failed = 11;
    failed = 12;
    PW_UNWRAP(v, RunWriter(db).add_variant({.run_id = store_failed, .name = "base", .is_baseline = true}));
    variant = v;
  }
  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  PW_UNWRAP(a, RunReader(db).run(store_failed));
  EXPECT_EQ(a.status, RunStatus::kStoreFailed);
  EXPECT_EQ(a.message, "store_failed: disk full: insert a trial");
  EXPECT_EQ(a.purpose, "run 1 of 3");
  EXPECT_EQ(RunReader(db).run(failed)->status, RunStatus::kFailed);
  PW_UNWRAP(variants, RunReader(db).variants(store_failed));
  ASSERT_EQ(variants.size(), 1u);
  EXPECT_EQ(variants[0].id, variant);
  // The rebuilt table takes the new status, and its CHECK still refuses others.
  PW_UNWRAP(c, RunWriter(db).start_run({.commit_id = a.commit_id}));
  EXPECT_TRUE(RunWriter(db).finish_run(c, {.status = RunStatus::kStoreFailed, .message = "disk full"}).has_value());
  EXPECT_EQ(RunReader(db).run(c)->status, RunStatus::kStoreFailed);
}

// Version 10 makes testbeds real: a job names its testbed (one live job of a
// commit per testbed), a run where the executor put it, and `lost` is a
// status. Runs and jobs of version 9 are kept whole, as the only testbed's.
TEST(TestbedMigration, RunsAndJobsOfVersion9AreKeptAndJobsAreOnePerTestbed) {
  TempDbPath tmp;
  RepoId repo = 0;
  {
    PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 9}));
    PW_UNWRAP(r, RepoWriter(db).ensure_repo({.path = "/r", .name = "r"}));
    repo = r;
    PW_UNWRAP(commit, RepoWriter(db).put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
    testing::raw_exec(tmp.path(), "INSERT INTO runs (id, commit_id, kind, purpose, status, started_at) VALUES (5, " +
                                      std::to_string(commit) + ", 'bench', 'run 1 of 3', 'ok', 100)");
    testing::raw_exec(tmp.path(), "INSERT INTO jobs (repo_id, commit_sha, branch, kind, enqueued_at) VALUES (" +
                                      std::to_string(repo) + ", '" + testing::sha_of(1) + "', 'main', 'bench', 100)");
  }
  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  PW_UNWRAP(run, RunReader(db).run(5));
  EXPECT_EQ(run.purpose, "run 1 of 3");
  EXPECT_EQ(run.status, RunStatus::kOk);
  EXPECT_EQ(run.placement, nlohmann::json::object());
  EXPECT_EQ(run.device_uuid, "");
  PW_UNWRAP(jobs, JobReader(db).jobs({}));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].testbed, "");

  // The same commit on another testbed is other work; on the same, not.
  PW_UNWRAP(hopper, JobQueue(db).enqueue({.repo_id = repo, .commit_sha = testing::sha_of(1), .branch = "main",
                                          .testbed = "hopper"}));
  EXPECT_TRUE(hopper.created);
  PW_UNWRAP(again, JobQueue(db).enqueue({.repo_id = repo, .commit_sha = testing::sha_of(1), .branch = "main",
                                         .again = true, .testbed = "hopper"}));
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.id, hopper.id);
  // Each testbed's worker claims its own.
  PW_UNWRAP(none, JobQueue(db).claim_next(std::string("blackwell")));
  EXPECT_FALSE(none.has_value());
  PW_UNWRAP(claimed, JobQueue(db).claim_next(std::string("hopper")));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->id, hopper.id);
  EXPECT_EQ(claimed->testbed, "hopper");

  // Where a run ran, and a lost one, are kept.
  PW_UNWRAP(lost, RunWriter(db).start_run({.commit_id = run.commit_id,
                                           .placement = {{"executor", "slurm"}, {"partition", "hopper"}},
                                           .device_uuid = "GPU-1"}));
  PW_ASSERT_OK(RunWriter(db).set_placement(lost, {{"slurm_job_id", 41}, {"node", "gpu07"}}, ""));
  PW_ASSERT_OK(RunWriter(db).finish_run(lost, {.status = RunStatus::kLost, .message = "slurm job 41 on gpu07 PREEMPTED"}));
  PW_UNWRAP(back, RunReader(db).run(lost));
  EXPECT_EQ(back.status, RunStatus::kLost);
  EXPECT_EQ(back.placement, (nlohmann::json{{"executor", "slurm"}, {"partition", "hopper"}, {"slurm_job_id", 41},
                                           {"node", "gpu07"}}));
  EXPECT_EQ(back.device_uuid, "GPU-1");
}

}  // namespace
}  // namespace perfwatch::store
