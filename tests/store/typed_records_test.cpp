// The typed facts of the store: a run's manifest facts (store/manifest_facts.h)
// and a job's progress (store/job_progress_store.h) -- read from what a run
// and the daemon stored, checked against their schemas (schemas/store/), and
// read from a database an older perfwatch wrote (schema version 3: the
// pooled value's column still called median, progress as a free JSON detail).
#include <sqlite3.h>

#include <gtest/gtest.h>

#include "schemas/schema.h"
#include "store/analysis_store.h"
#include "store/job_progress_store.h"
#include "store/manifest_facts.h"
#include "store/migrations.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using nlohmann::json;
using testing::TempDbPath;

void raw_exec(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_close(db);
}

::testing::AssertionResult matches(const json& doc, const std::string& schema_path) {
  auto schema = schemas::Schema::load(schema_path);
  if (!schema) return ::testing::AssertionFailure() << schema.error().to_string();
  auto valid = schema->validate(doc, schema_path);
  if (!valid) return ::testing::AssertionFailure() << valid.error().to_string() << "\n" << doc.dump();
  return ::testing::AssertionSuccess();
}

// This repo's own manifest, version 1, as a run stores it.
json manifest_v1() {
  return json::parse(R"({
    "schema_version": 1,
    "build": {"command": "kernels/scripts/build.sh build/kernels"},
    "paths": ["kernels/"],
    "bench": {"command": "build/kernels/mla_bench"},
    "variants": [
      {"name": "bt32_w4_s2", "baseline": true, "params": {"block_t": 32, "num_warps": 4}},
      {"name": "bt64_w4_s2", "params": {"block_t": 64, "num_warps": 4}},
      {"name": "bt32_w8_s3", "params": {"block_t": 32, "num_warps": 8}}
    ],
    "sweep": {"batch": [1, 8, 48, 64, 80, 96], "heads": [16], "topk": [2048], "dtype": ["bf16"]},
    "metric": {"name": "time_us", "direction": "lower_is_better"},
    "runs": {"per_commit": 4, "max_per_commit": 10, "pinned_baseline": "v1.0"},
    "noise": {"default_band": 0.07}
  })");
}

TEST(ManifestFacts, VersionOneSaysMetricVariantsPointsBandAndRuns) {
  PW_UNWRAP(f, manifest_facts(manifest_v1(), "run 1 manifest"));
  EXPECT_EQ(f.manifest_version, 1);
  EXPECT_EQ(f.metric, "time_us");
  EXPECT_TRUE(f.lower_is_better);
  ASSERT_EQ(f.variants.size(), 3u);
  EXPECT_EQ(f.baseline, "bt32_w4_s2");
  EXPECT_TRUE(f.variants[0].is_baseline);
  EXPECT_FALSE(f.variants[1].is_baseline);
  EXPECT_EQ(f.variants[2].params["num_warps"], 8);
  EXPECT_EQ(f.points, 6);
  EXPECT_EQ(f.cells(), 18);
  ASSERT_EQ(f.axes.size(), 4u);
  EXPECT_EQ(f.axes[0], (ManifestAxisFacts{"batch", 6}));
  // Version 1's four metrics, as the runner translates them.
  ASSERT_EQ(f.metrics.size(), 4u);
  EXPECT_EQ(f.metrics[0], (ManifestMetricFacts{"time_us", "us", true}));
  EXPECT_EQ(f.metrics[1], (ManifestMetricFacts{"tokens_per_s", "tokens/s", false}));
  EXPECT_EQ(f.unit(), "us");
  EXPECT_DOUBLE_EQ(f.default_band_rel, 0.07);
  EXPECT_EQ(f.runs.per_commit, 4);
  EXPECT_EQ(f.runs.max_per_commit, 10);
  EXPECT_FALSE(f.runs.interleave_baseline);
  EXPECT_EQ(f.runs.pinned_baseline, "v1.0");
  EXPECT_TRUE(matches(to_json(f), "store/manifest_facts.schema.json"));
}

TEST(ManifestFacts, DefaultsAreTheManifestSchemasDefaults) {
  json m = manifest_v1();
  m.erase("noise");
  m.erase("runs");
  m.erase("metric");
  m["sweep"] = {{"batch", {1, 8}}};
  PW_UNWRAP(f, manifest_facts(m, ""));
  EXPECT_DOUBLE_EQ(f.default_band_rel, schemas::kDefaultBandRel);
  EXPECT_EQ(f.runs.per_commit, schemas::kDefaultRunsPerCommit);
  EXPECT_EQ(f.runs.max_per_commit, schemas::kDefaultMaxRunsPerCommit);
  EXPECT_EQ(f.metric, schemas::kDefaultMetric);
  EXPECT_EQ(f.points, 2);  // heads, topk, dtype: one default value each

  // A rate without a direction is higher-is-better, as the runner reads it.
  m["metric"] = {{"name", "tokens_per_s"}};
  PW_UNWRAP(rate, manifest_facts(m, ""));
  EXPECT_FALSE(rate.lower_is_better);

  // A lone variant is the baseline without saying so.
  m["variants"] = json::array({{{"name", "only"}, {"params", json::object()}}});
  PW_UNWRAP(lone, manifest_facts(m, ""));
  EXPECT_EQ(lone.baseline, "only");
  EXPECT_TRUE(lone.variants[0].is_baseline);

  // No manifest stored at all: every default, version 0.
  PW_UNWRAP(none, manifest_facts(json::object(), ""));
  EXPECT_EQ(none, ManifestFacts{});
  EXPECT_EQ(none.manifest_version, 0);
  EXPECT_TRUE(matches(to_json(none), "store/manifest_facts.schema.json"));
}

TEST(ManifestFacts, VersionTwoReadsDeclaredMetricsAndNamedAxes) {
  json m = {{"schema_version", 2},
            {"paths", {"src/"}},
            {"bench", {{"command", "bench"}}},
            {"variants", {{{"name", "a"}, {"params", json::object()}}, {{"name", "b"}, {"baseline", true}, {"params", {{"tile", 64}}}}}},
            {"sweep", {{"axes", {{"batch", {1, 8, 64}}, {"dtype", {"bf16", "fp8"}}}}}},
            {"metrics", {{{"name", "time_us"}, {"unit", "us"}, {"direction", "lower_is_better"}},
                         {{"name", "gbps"}, {"unit", "GB/s"}, {"direction", "higher_is_better"}}}},
            {"metric", "gbps"}};
  PW_UNWRAP(f, manifest_facts(m, ""));
  EXPECT_EQ(f.manifest_version, 2);
  EXPECT_EQ(f.metric, "gbps");
  EXPECT_FALSE(f.lower_is_better);
  EXPECT_EQ(f.metrics, (std::vector<ManifestMetricFacts>{{"time_us", "us", true}, {"gbps", "GB/s", false}}));
  EXPECT_EQ(f.unit(), "GB/s");
  EXPECT_EQ(f.baseline, "b");
  EXPECT_EQ(f.points, 6);
  EXPECT_EQ(f.cells(), 12);
  EXPECT_TRUE(matches(to_json(f), "store/manifest_facts.schema.json"));

  m.erase("metric");  // the first declared one judges
  PW_UNWRAP(first, manifest_facts(m, ""));
  EXPECT_EQ(first.metric, "time_us");
  EXPECT_TRUE(first.lower_is_better);

  m["metric"] = "nope";
  auto unknown = manifest_facts(m, "run 3 manifest");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().where, "run 3 manifest: metric");
}

TEST(ManifestFacts, AFieldOfTheWrongTypeIsNamed) {
  json m = manifest_v1();
  m["variants"][1]["baseline"] = "yes";
  auto bad = manifest_facts(m, "run 7 manifest");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().where, "run 7 manifest: variants[1].baseline");

  m = manifest_v1();
  m["noise"]["default_band"] = 0;
  bad = manifest_facts(m, "m");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().where, "m: noise.default_band");

  bad = manifest_facts(json::array({1, 2}), "m");
  ASSERT_FALSE(bad);
}

class TypedRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Database::open(tmp_.path(), {.clock = [this] { return now_; }});
    ASSERT_TRUE(opened) << opened.error().to_string();
    db_.emplace(std::move(*opened));
    auto repo = RepoWriter(*db_).ensure_repo({.path = "/src/kernels", .name = "kernels"});
    ASSERT_TRUE(repo);
    repo_ = *repo;
    auto c = RepoWriter(*db_).put_commit({.repo_id = repo_, .sha = testing::sha_of(1), .subject = "one"});
    ASSERT_TRUE(c);
    commit_ = *c;
  }

  TempDbPath tmp_;
  UnixSeconds now_ = 1'700'000'000;
  std::optional<Database> db_;
  RepoId repo_ = 0;
  CommitId commit_ = 0;
};

TEST_F(TypedRecords, ARunsManifestFactsRoundTrip) {
  RunWriter runs(*db_);
  RunReader reader(*db_);
  PW_UNWRAP(bare, runs.start_run({.commit_id = commit_}));  // stored without a manifest
  json older = manifest_v1();
  older["metric"] = {{"name", "tokens_per_s"}, {"direction", "higher_is_better"}};
  PW_UNWRAP(first, runs.start_run({.commit_id = commit_, .manifest = older}));
  PW_UNWRAP(second, runs.start_run({.commit_id = commit_, .manifest = manifest_v1()}));

  PW_UNWRAP(expected, manifest_facts(manifest_v1(), ""));
  PW_UNWRAP(got, reader.manifest_facts(second));
  EXPECT_EQ(got, expected);
  PW_UNWRAP(got_first, reader.manifest_facts(first));
  EXPECT_EQ(got_first.metric, "tokens_per_s");
  EXPECT_FALSE(got_first.lower_is_better);
  PW_UNWRAP(got_bare, reader.manifest_facts(bare));
  EXPECT_EQ(got_bare, ManifestFacts{});

  // A commit's facts are its newest run's that stored a manifest.
  PW_UNWRAP(newer_bare, runs.start_run({.commit_id = commit_}));
  (void)newer_bare;
  PW_UNWRAP(of_commit, reader.manifest_facts_of_commit(commit_));
  EXPECT_EQ(of_commit, expected);

  auto unknown = reader.manifest_facts(9999);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

TEST_F(TypedRecords, AJobsProgressRoundTrips) {
  PW_UNWRAP(job, JobQueue(*db_).enqueue({.repo_id = repo_, .commit_sha = testing::sha_of(1), .branch = "main"}));
  JobProgress p;
  p.job_id = job.id;
  p.step = JobStep::kRun;
  p.commit = testing::sha_of(1);
  p.measuring = testing::sha_of(0);
  p.run_kind = RunKind::kBench;
  p.purpose = "re-run of c0de000000 beside c0de000001 (2 of 6 points)";
  p.run = 2;
  p.runs_planned = 6;
  p.point_index = 3;
  p.points = 6;
  p.point = "batch=48";
  p.variant = "bt64_w4_s2";
  p.trials = 7;
  p.elapsed_s = 12.5;
  PW_ASSERT_OK(JobProgressWriter(*db_).set(p));
  PW_UNWRAP(back, JobProgressReader(*db_).progress(job.id));
  ASSERT_TRUE(back.has_value());
  p.updated_at = now_;
  EXPECT_EQ(*back, p);
  EXPECT_TRUE(matches(to_json(*back), "store/job_progress.schema.json"));

  // Overwritten as the job goes: the next report replaces every field.
  now_ += 5;
  JobProgress ended;
  ended.job_id = job.id;
  ended.step = *final_step(JobState::kFailed);
  ended.commit = testing::sha_of(1);
  ended.message = "build failed: exit 2";
  PW_ASSERT_OK(JobProgressWriter(*db_).set(ended));
  PW_UNWRAP(last, JobProgressReader(*db_).progress(job.id));
  ended.updated_at = now_;
  EXPECT_EQ(*last, ended);
  EXPECT_EQ(to_string(last->step), "failed");
  EXPECT_TRUE(matches(to_json(*last), "store/job_progress.schema.json"));

  PW_UNWRAP(none, JobProgressReader(*db_).progress(job.id + 1));
  EXPECT_FALSE(none.has_value());
  p.job_id = 4242;
  EXPECT_EQ(JobProgressWriter(*db_).set(p).error().code, ErrorCode::kNotFound);
}

TEST(TypedRecordsMigration, AVersionThreeDatabaseReadsAsTypedRecords) {
  TempDbPath tmp;
  JobId job = 0;
  RunId run = 0;
  CommitId commit = 0;
  PointId point = 0;
  TestbedId testbed = 0;
  {
    // As perfwatch left it before the names said the statistic.
    PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 3}));
    ASSERT_EQ(db.schema_version(), 3);
    PW_UNWRAP(repo, RepoWriter(db).ensure_repo({.path = "/src/kernels", .name = "kernels"}));
    PW_UNWRAP(c, RepoWriter(db).put_commit({.repo_id = repo, .sha = testing::sha_of(1), .subject = "one"}));
    commit = c;
    PW_UNWRAP(tb, RunWriter(db).ensure_testbed({.name = "cpu-1", .backend = Backend::kCpu}));
    testbed = tb;
    point = 8;  // version 3's points table, written raw below
    // The run and the job as version 3 wrote them (today's writers name columns of version 10).
    run = 5;
    job = 6;
  }
  raw_exec(tmp.path(), "INSERT INTO runs (id, commit_id, kind, status, started_at, manifest_json) VALUES (5, " +
                           std::to_string(commit) + ", 'bench', 'running', 100, '" + manifest_v1().dump() + "')");
  raw_exec(tmp.path(), "INSERT INTO jobs (id, repo_id, commit_sha, branch, kind, enqueued_at) VALUES (6, 1, '" +
                           testing::sha_of(1) + "', 'main', 'bench', 100)");
  // Rows in the old layout and the old words, written raw.
  raw_exec(tmp.path(), "INSERT INTO points (id, key, batch, heads, topk, dtype) VALUES (8, 'b8_h16_k2048_bf16', 8, 16, 2048, 'bf16')");
  raw_exec(tmp.path(), "INSERT INTO commit_summaries (commit_id, testbed_id, variant, point_id, metric, runs, median, "
                       "ci_low, ci_high, updated_at) VALUES (" + std::to_string(commit) + ", " + std::to_string(testbed) +
                       ", 'base', " + std::to_string(point) + ", 'time_us', 3, 41.25, 40.5, 42.0, 100)");
  raw_exec(tmp.path(),
           "INSERT INTO job_progress (job_id, step, detail_json, updated_at) VALUES (" + std::to_string(job) +
               ", 'run', '{\"commit\": \"" + testing::sha_of(1) + "\", \"of\": \"" + testing::sha_of(0) +
               "\", \"kind\": \"baseline-rerun\", \"purpose\": \"pinned baseline re-run beside c0de000001\", "
               "\"run\": 2, \"runs_planned\": 3, \"point_index\": 4, \"points\": 6, \"point\": \"batch=8\", "
               "\"variant\": \"base\", \"trials\": 9, \"elapsed_s\": 3.25}', 200)");

  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  EXPECT_GE(db.schema_version(), 4);

  // The pooled value, under its own name.
  PW_UNWRAP(pooled, AnalysisReader(db).commit_summary(commit, testbed, "base", point));
  ASSERT_TRUE(pooled.has_value());
  EXPECT_DOUBLE_EQ(pooled->geomean_of_run_medians, 41.25);
  EXPECT_EQ(pooled->ci_low, 40.5);
  EXPECT_EQ(pooled->runs, 3);

  // The free progress detail of before, as the typed record.
  PW_UNWRAP(progress, JobProgressReader(db).progress(job));
  ASSERT_TRUE(progress.has_value());
  EXPECT_EQ(progress->step, JobStep::kRun);
  EXPECT_EQ(progress->commit, testing::sha_of(1));
  EXPECT_EQ(progress->measuring, testing::sha_of(0));
  EXPECT_EQ(progress->run_kind, RunKind::kBaselineRerun);
  EXPECT_EQ(progress->run, 2);
  EXPECT_EQ(progress->runs_planned, 3);
  EXPECT_EQ(progress->point_index, 4);
  EXPECT_EQ(progress->points, 6);
  EXPECT_EQ(progress->variant, "base");
  EXPECT_EQ(progress->trials, 9);
  EXPECT_EQ(progress->elapsed_s, 3.25);
  EXPECT_EQ(progress->updated_at, 200);
  EXPECT_TRUE(matches(to_json(*progress), "store/job_progress.schema.json"));

  // The run's manifest, stored before, gives its facts.
  PW_UNWRAP(facts, RunReader(db).manifest_facts(run));
  EXPECT_EQ(facts.baseline, "bt32_w4_s2");
  EXPECT_EQ(facts.cells(), 18);

  // And the new layout is written and read beside the old rows.
  PW_ASSERT_OK(AnalysisWriter(db).put_commit_summary({.commit_id = commit, .testbed_id = testbed, .variant = "w8",
                                                      .point_id = point, .metric = "time_us", .runs = 2,
                                                      .geomean_of_run_medians = 39.0}));
  PW_UNWRAP(all, AnalysisReader(db).commit_summaries(commit));
  EXPECT_EQ(all.size(), 2u);
}

TEST(TypedRecordsMigration, ADamagedProgressRowIsAnErrorNotACrash) {
  TempDbPath tmp;
  JobId job = 0;
  {
    PW_UNWRAP(db, Database::open(tmp.path()));
    PW_UNWRAP(repo, RepoWriter(db).ensure_repo({.path = "/src/kernels", .name = "kernels"}));
    PW_UNWRAP(j, JobQueue(db).enqueue({.repo_id = repo, .commit_sha = testing::sha_of(1)}));
    job = j.id;
  }
  raw_exec(tmp.path(), "INSERT INTO job_progress (job_id, step, detail_json, updated_at) VALUES (" +
                           std::to_string(job) + ", 'run', '{\"trials\": \"many\"}', 1)");
  PW_UNWRAP(db, Database::open(tmp.path()));
  auto read = JobProgressReader(db).progress(job);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, ErrorCode::kInternal);
  EXPECT_NE(read.error().message.find("trials"), std::string::npos) << read.error().message;
}

}  // namespace
}  // namespace perfwatch::store
