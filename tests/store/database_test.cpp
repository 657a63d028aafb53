// The database handle: pragmas on open, migrations, transactions, foreign
// keys, errors, and readers beside a writer.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include "store/analysis_store.h"
#include "store/database.h"
#include "store/detail/statement.h"
#include "store/migrations.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

// Reads one value through a second, raw connection: what is on disk, not
// what the store's connection believes.
std::string raw_query(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string out;
  if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

void raw_exec(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_close(db);
}

// A PRAGMA's value on the store's own connection.
std::int64_t pragma(Database& db, const std::string& name) {
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(detail::Access::handle(db), ("PRAGMA " + name).c_str(), -1, &s, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
  std::int64_t value = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return value;
}

TEST(Database, OpenSetsWalForeignKeysSynchronousNormalBusyTimeout) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(raw_query(tmp.path(), "PRAGMA journal_mode"), "wal");  // persistent, seen by any connection
  EXPECT_EQ(pragma(db, "foreign_keys"), 1);
  EXPECT_EQ(pragma(db, "synchronous"), 1);  // NORMAL
  EXPECT_EQ(pragma(db, "busy_timeout"), 5000);
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  EXPECT_FALSE(db.read_only());
}

TEST(Migrations, EmbeddedFilesAreNumberedWithoutGaps) {
  PW_UNWRAP(all, migrations());
  ASSERT_GE(all.size(), 2u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].version, static_cast<int>(i) + 1);
    EXPECT_FALSE(all[i].sql.empty());
  }
  EXPECT_EQ(all[0].name, "sql/001_initial.sql");
  EXPECT_EQ(latest_schema_version(), static_cast<int>(all.size()));
}

TEST(Migrations, FreshDatabaseGetsEveryMigration) {
  TempDbPath tmp;
  { PW_UNWRAP(db, Database::open(tmp.path())); }
  EXPECT_EQ(raw_query(tmp.path(), "PRAGMA user_version"), std::to_string(latest_schema_version()));
  EXPECT_EQ(raw_query(tmp.path(), "SELECT count(*) FROM sqlite_schema WHERE name = 'jobs'"), "1");
  EXPECT_EQ(raw_query(tmp.path(), "SELECT count(*) FROM sqlite_schema WHERE name = 'experiments_fts'"), "1");
}

TEST(Migrations, OldDatabaseIsMigratedAndKeepsItsData) {
  TempDbPath tmp;
  RunId run = 0;
  VariantId variant = 0;
  PointId point = 0;
  CommitId commit = 0;
  {
    // A database as a perfwatch with only migration 1 left it.
    PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 1}));
    ASSERT_EQ(db.schema_version(), 1);
    EXPECT_EQ(raw_query(tmp.path(), "SELECT count(*) FROM sqlite_schema WHERE name = 'jobs'"), "0");
    RepoWriter repos(db);
    RunWriter runs(db);
    PW_UNWRAP(repo, repos.ensure_repo({.path = "/src/kernels", .name = "kernels"}));
    PW_UNWRAP(c, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1), .subject = "baseline"}));
    commit = c;
    // start_run writes job_id, a column of migration 2: write the run raw.
    raw_exec(tmp.path(),
             "INSERT INTO runs (id, commit_id, kind, status, started_at) VALUES (7, " + std::to_string(commit) +
                 ", 'bench', 'ok', 100)");
    run = 7;
    PW_UNWRAP(v, runs.add_variant({.run_id = run, .name = "w4", .params = {{"num_warps", 4}}, .is_baseline = true}));
    variant = v;
    // Points and trials as version 1 shaped them: written raw too.
    raw_exec(tmp.path(), "INSERT INTO points (id, key, batch, heads, topk, dtype) VALUES (3, 'b8_h16_k2048_bf16', 8, 16, 2048, 'bf16')");
    point = 3;
    for (int i = 1; i <= 3; ++i)
      raw_exec(tmp.path(), "INSERT INTO trials (run_id, variant_id, point_id, trial_no, time_us, steps, tokens_per_s, "
                           "bytes_per_s, flops_per_s, throttled) VALUES (7, " + std::to_string(variant) + ", 3, " +
                               std::to_string(i) + ", " + std::to_string(10.0 + i) + ", 10, 1, 1, 1, 0)");
  }
  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  RunReader reader(db);
  PW_UNWRAP(r, reader.run(run));
  EXPECT_EQ(r.commit_id, commit);
  EXPECT_EQ(r.status, RunStatus::kOk);
  EXPECT_FALSE(r.job_id.has_value());  // the column migration 2 added
  PW_UNWRAP(trials, reader.trials(run));
  ASSERT_EQ(trials.size(), 3u);
  EXPECT_DOUBLE_EQ(trials[2].metrics.at("time_us"), 13.0);
  PW_UNWRAP(variants, reader.variants(run));
  ASSERT_EQ(variants.size(), 1u);
  EXPECT_EQ(variants[0].params["num_warps"], 4);
  // And the tables of migration 2 work beside the old data.
  PW_UNWRAP(testbed, RunWriter(db).ensure_testbed({.name = "cpu-1", .backend = Backend::kCpu}));
  PW_ASSERT_OK(AnalysisWriter(db).put_noise_band({.testbed_id = testbed, .variant = "w4", .point_id = point}));
  PW_UNWRAP(band, AnalysisReader(db).noise_band(testbed, "w4", point));
  ASSERT_TRUE(band.has_value());
  EXPECT_DOUBLE_EQ(band->band_rel, 0.05);
}

// Schema version 8: points become axis maps, trials carry any metrics,
// summaries one row per metric. A version 7 database with rows of the MLA
// shape (version 1 of the manifest) migrates with nothing lost.
TEST(Migrations, VersionSevenPointsTrialsAndSummariesMigrateWithNothingLost) {
  TempDbPath tmp;
  {
    PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 7}));
    ASSERT_EQ(db.schema_version(), 7);
  }
  raw_exec(tmp.path(),
           "INSERT INTO repos (id, path, name, created_at) VALUES (1, '/src/mla', 'mla', 1);"
           "INSERT INTO commits (id, repo_id, sha, recorded_at) VALUES (1, 1, 'c0ffee', 1);"
           "INSERT INTO testbeds (id, name, backend, created_at) VALUES (1, 'cpu', 'cpu', 1);"
           "INSERT INTO runs (id, commit_id, testbed_id, kind, status, started_at) VALUES (5, 1, 1, 'bench', 'ok', 1);"
           "INSERT INTO run_variants (id, run_id, name, is_baseline) VALUES (9, 5, 'bt32', 1);"
           "INSERT INTO points (id, key, batch, heads, topk, dtype) VALUES (2, 'b96_h16_k2048_bf16', 96, 16, 2048, 'bf16');"
           "INSERT INTO points (id, key, batch, heads, topk, dtype, extra_json) "
           "  VALUES (4, 'b8_h16_k512_fp8', 8, 16, 512, 'fp8', '{\"context_rows\": 8192}');"
           "INSERT INTO points (id, key, batch, heads, topk, dtype) VALUES (6, 'legacy', NULL, NULL, NULL, '');"
           "INSERT INTO trials (run_id, variant_id, point_id, trial_no, time_us, steps, tokens_per_s, bytes_per_s, "
           "  flops_per_s, sm_clock_mhz, throttled) VALUES (5, 9, 2, 1, 41.5, 100, 2313253.0, 4.5e11, 3.2e12, 1755, 0);"
           "INSERT INTO trials (run_id, variant_id, point_id, trial_no, time_us, steps, tokens_per_s, bytes_per_s, "
           "  flops_per_s, sm_clock_mhz, throttled) VALUES (5, 9, 2, 2, 40.5, 100, 2370370.0, 4.6e11, 3.3e12, NULL, 1);"
           "INSERT INTO summaries (run_id, variant_id, point_id, metric, n, median, ci_low, ci_high, stop_reason, "
           "  computed_at) VALUES (5, 9, 2, 'time_us', 1, 41.5, 41.0, 42.0, 'max_trials', 3);"
           "INSERT INTO commit_summaries (commit_id, testbed_id, variant, point_id, metric, runs, "
           "  geomean_of_run_medians, updated_at) VALUES (1, 1, 'bt32', 2, 'time_us', 1, 41.5, 3);");
  PW_UNWRAP(db, Database::open(tmp.path()));
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  RunReader reader(db);

  // Points: the same ids, the canonical key, the label the API showed, the axes.
  PW_UNWRAP(p2, reader.point(2));
  EXPECT_EQ(p2.key, "batch=96,dtype=bf16,heads=16,topk=2048");
  EXPECT_EQ(p2.label, "C96");
  EXPECT_EQ(nlohmann::json(p2.axes), nlohmann::json({{"batch", 96}, {"heads", 16}, {"topk", 2048}, {"dtype", "bf16"}}));
  EXPECT_EQ(p2.axes.begin().key(), "batch") << "the old columns' order";
  PW_UNWRAP(p4, reader.point(4));
  EXPECT_EQ(p4.key, "batch=8,context_rows=8192,dtype=fp8,heads=16,topk=512");
  EXPECT_EQ(p4.label, "C8");
  EXPECT_EQ(p4.axes["context_rows"], 8192);
  PW_UNWRAP(p6, reader.point(6));
  EXPECT_EQ(p6.key, "legacy") << "a point with no axis keeps its key";
  EXPECT_EQ(p6.label, "legacy");
  PW_UNWRAP(found, reader.find_point("batch=96,dtype=bf16,heads=16,topk=2048"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, 2);

  // Trials: every metric, steps, clock and the throttled mark.
  PW_UNWRAP(trials, reader.trials(5));
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].metrics, (std::map<std::string, double>{
                                   {"time_us", 41.5}, {"tokens_per_s", 2313253.0}, {"bytes_per_s", 4.5e11}, {"flops_per_s", 3.2e12}}));
  EXPECT_EQ(trials[0].steps, 100);
  EXPECT_EQ(trials[0].sm_clock_mhz, 1755.0);
  EXPECT_FALSE(trials[0].throttled);
  EXPECT_TRUE(trials[1].throttled);
  EXPECT_FALSE(trials[1].sm_clock_mhz.has_value());

  // Summaries: the judged metric's, marked judged; the run table reads it.
  PW_UNWRAP(summaries, reader.summaries(5));
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].metric, "time_us");
  EXPECT_TRUE(summaries[0].judged);
  EXPECT_EQ(summaries[0].median, 41.5);
  EXPECT_EQ(summaries[0].stop_reason, "max_trials");
  PW_UNWRAP(medians, AnalysisReader(db).run_medians(1, 1, RunKind::kBench));
  ASSERT_EQ(medians.size(), 1u);
  EXPECT_EQ(medians[0].median, 41.5);

  // A second metric of the same cell is a row of its own; judging still reads the judged one.
  PW_ASSERT_OK(AnalysisWriter(db).put_summary(
      {.run_id = 5, .variant_id = 9, .point_id = 2, .metric = "tokens_per_s", .judged = false, .n = 1, .median = 2313253.0}));
  PW_UNWRAP(both, reader.summaries(5));
  EXPECT_EQ(both.size(), 2u);
  PW_UNWRAP(still, AnalysisReader(db).run_medians(1, 1, RunKind::kBench));
  ASSERT_EQ(still.size(), 1u);
  EXPECT_EQ(still[0].median, 41.5);
  PW_UNWRAP(table, reader.table(5));
  ASSERT_EQ(table.cells.size(), 1u);
  ASSERT_TRUE(table.cells[0].summary.has_value());
  EXPECT_EQ(table.cells[0].summary->metric, "time_us");
  EXPECT_EQ(table.cells[0].metrics.size(), 2u);
  EXPECT_EQ(raw_query(tmp.path(), "SELECT count(*) FROM pragma_foreign_key_check"), "0");
}

TEST(Migrations, NewerDatabaseIsRefused) {
  TempDbPath tmp;
  { PW_UNWRAP(db, Database::open(tmp.path())); }
  raw_exec(tmp.path(), "PRAGMA user_version = " + std::to_string(latest_schema_version() + 1));
  auto db = Database::open(tmp.path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(db.error().message.find("newer than this perfwatch"), std::string::npos) << db.error().to_string();
  EXPECT_NE(db.error().where.find(tmp.path().string()), std::string::npos);
  // Untouched: still the newer version.
  EXPECT_EQ(raw_query(tmp.path(), "PRAGMA user_version"), std::to_string(latest_schema_version() + 1));
  auto reader = Database::open_read_only(tmp.path());
  ASSERT_FALSE(reader.has_value());
  EXPECT_EQ(reader.error().code, ErrorCode::kInvalidArgument);
}

TEST(Migrations, ReadOnlyOpenRefusesAnOlderDatabase) {
  TempDbPath tmp;
  { PW_UNWRAP(db, Database::open(tmp.path(), {.schema_version = 1})); }
  auto reader = Database::open_read_only(tmp.path());
  ASSERT_FALSE(reader.has_value());
  EXPECT_NE(reader.error().message.find("older"), std::string::npos) << reader.error().to_string();
}

TEST(Database, NotADatabaseIsAnIoError) {
  TempDbPath tmp;
  {
    std::FILE* f = std::fopen(tmp.path().c_str(), "w");
    std::fputs("this is not an SQLite database, it is a text file long enough to have a header.....", f);
    std::fclose(f);
  }
  auto db = Database::open(tmp.path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().code, ErrorCode::kIo);
  EXPECT_NE(db.error().where.find(tmp.path().string()), std::string::npos);
}

TEST(Database, ReadOnlyOpenOfAMissingFileIsNotFound) {
  TempDbPath tmp;
  auto db = Database::open_read_only(tmp.path());
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(tmp.path()));  // and nothing was created
}

TEST(Transaction, RollsBackUnlessCommitted) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  RepoWriter repos(db);
  RepoReader reader(db);
  {
    Transaction tx(db);
    PW_ASSERT_OK(tx.status());
    PW_ASSERT_OK(repos.ensure_repo({.path = "/a", .name = "a"}));
  }  // no commit
  PW_UNWRAP(none, reader.repos());
  EXPECT_TRUE(none.empty());
  {
    Transaction tx(db);
    PW_ASSERT_OK(repos.ensure_repo({.path = "/b", .name = "b"}));
    PW_ASSERT_OK(tx.commit());
  }
  PW_UNWRAP(one, reader.repos());
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].path, "/b");
}

TEST(Transaction, AFailingStoreCallInsideACallersTransactionUndoesOnlyItself) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  RepoWriter repos(db);
  RunWriter runs(db);
  RunReader reader(db);
  PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
  PW_UNWRAP(commit, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
  PW_UNWRAP(run, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(v, runs.add_variant({.run_id = run, .name = "base", .is_baseline = true}));
  PW_UNWRAP(p, runs.ensure_point(testing::point_record(1)));
  {
    Transaction tx(db);
    PW_ASSERT_OK(runs.insert_trial(testing::trial_record(run, v, p, 1, 5.0)));
    // insert_trials runs in a savepoint inside tx: its second row is a
    // duplicate, so neither of its rows stays, but tx goes on.
    std::vector<TrialRecord> batch = {testing::trial_record(run, v, p, 2, 5.0), testing::trial_record(run, v, p, 1, 6.0)};
    auto bad = runs.insert_trials(batch);
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
    PW_ASSERT_OK(runs.insert_trial(testing::trial_record(run, v, p, 3, 5.0)));
    PW_ASSERT_OK(tx.commit());
  }
  PW_UNWRAP(trials, reader.trials(run));
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].trial_no, 1);
  EXPECT_DOUBLE_EQ(trials[0].metrics.at("time_us"), 5.0);
  EXPECT_EQ(trials[1].trial_no, 3);
}

TEST(Transaction, InsertTrialsIsAllOrNothing) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  RepoWriter repos(db);
  RunWriter runs(db);
  PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
  PW_UNWRAP(commit, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
  PW_UNWRAP(run, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(v, runs.add_variant({.run_id = run, .name = "base"}));
  PW_UNWRAP(p, runs.ensure_point(testing::point_record(1)));
  std::vector<TrialRecord> batch;
  for (int i = 1; i <= 5; ++i) batch.push_back(testing::trial_record(run, v, p, i, 1.0));
  batch.back().metrics["time_us"] = -1;  // refused: every metric must be > 0
  EXPECT_FALSE(runs.insert_trials(batch).has_value());
  EXPECT_EQ(*RunReader(db).trial_count(run), 0);
}

TEST(ForeignKeys, AreEnforced) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  RepoWriter repos(db);
  RunWriter runs(db);
  // A commit of a repo that does not exist.
  auto orphan = repos.put_commit({.repo_id = 42, .sha = testing::sha_of(1)});
  ASSERT_FALSE(orphan.has_value());
  EXPECT_EQ(orphan.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(orphan.error().message.find("FOREIGN KEY"), std::string::npos) << orphan.error().to_string();
  EXPECT_EQ(orphan.error().where, tmp.path().string() + ": put commit " + testing::sha_of(1));

  PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
  PW_UNWRAP(commit, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
  PW_UNWRAP(run_a, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(run_b, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(variant_of_a, runs.add_variant({.run_id = run_a, .name = "base"}));
  PW_UNWRAP(p, runs.ensure_point(testing::point_record(1)));
  // A trial of run b that names run a's variant: the composite key says no.
  auto crossed = runs.insert_trial(testing::trial_record(run_b, variant_of_a, p, 1, 1.0));
  ASSERT_FALSE(crossed.has_value());
  EXPECT_EQ(crossed.error().code, ErrorCode::kInvalidArgument);
  // A trial at a point that does not exist.
  EXPECT_FALSE(runs.insert_trial(testing::trial_record(run_a, variant_of_a, 999, 1, 1.0)).has_value());
  // A run of a commit that does not exist.
  EXPECT_FALSE(runs.start_run({.commit_id = 999}).has_value());
  PW_ASSERT_OK(runs.insert_trial(testing::trial_record(run_a, variant_of_a, p, 1, 1.0)));
}

TEST(ReadOnly, ReaderSeesCommittedDataWhileTheWriterHoldsATransaction) {
  TempDbPath tmp;
  PW_UNWRAP(writer, Database::open(tmp.path()));
  RepoWriter repos(writer);
  PW_ASSERT_OK(repos.ensure_repo({.path = "/committed", .name = "committed"}));
  // No waiting allowed: if the reader needed the writer's lock it would fail at once.
  PW_UNWRAP(reader, Database::open_read_only(tmp.path(), {.busy_timeout_ms = 0}));
  EXPECT_TRUE(reader.read_only());
  Transaction tx(writer);
  PW_ASSERT_OK(tx.status());
  PW_ASSERT_OK(repos.ensure_repo({.path = "/uncommitted", .name = "uncommitted"}));
  {
    PW_UNWRAP(seen, RepoReader(reader).repos());
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].path, "/committed");
  }
  PW_ASSERT_OK(tx.commit());
  PW_UNWRAP(seen, RepoReader(reader).repos());
  EXPECT_EQ(seen.size(), 2u);
}

TEST(ReadOnly, RefusesWritesAndOpensWithoutAWriter) {
  TempDbPath tmp;
  { PW_UNWRAP(db, Database::open(tmp.path())); }  // writer gone: no -wal/-shm left
  PW_UNWRAP(reader, Database::open_read_only(tmp.path()));
  auto write = RepoWriter(reader).ensure_repo({.path = "/x", .name = "x"});
  ASSERT_FALSE(write.has_value());
  EXPECT_NE(write.error().where.find("ensure repo"), std::string::npos);
  PW_UNWRAP(none, RepoReader(reader).repos());
  EXPECT_TRUE(none.empty());
}

TEST(Statement, BindsAndColumnsAreChecked) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  auto unknown_param = detail::guard(db, "test", [&] {
    detail::Query q(db, "SELECT :a AS a");
    q->bind(":b", 1);
  });
  ASSERT_FALSE(unknown_param.has_value());
  EXPECT_EQ(unknown_param.error().code, ErrorCode::kInternal);
  auto unbound = detail::guard(db, "test", [&] {
    detail::Query q(db, "SELECT :a AS a");
    q->step();
  });
  EXPECT_FALSE(unbound.has_value());
  auto null_into_int = detail::guard(db, "test", [&] {
    detail::Query q(db, "SELECT NULL AS a");
    q->step();
    return q->get<std::int64_t>("a");
  });
  EXPECT_FALSE(null_into_int.has_value());
  auto text_into_int = detail::guard(db, "test", [&] {
    detail::Query q(db, "SELECT 'x' AS a");
    q->step();
    return q->get<std::int64_t>("a");
  });
  EXPECT_FALSE(text_into_int.has_value());
  auto unknown_column = detail::guard(db, "test", [&] {
    detail::Query q(db, "SELECT 1 AS a");
    q->step();
    return q->get<std::int64_t>("b");
  });
  EXPECT_FALSE(unknown_column.has_value());
  auto good = detail::guard(db, "test", [&] {
    detail::Query q(db, "SELECT :a AS a, :b AS b, NULL AS c");
    q->bind(":a", 41).bind(":b", std::optional<double>{});
    q->step();
    return q->get<std::int64_t>("a") + (q->get<std::optional<double>>("b") ? 100 : 1) +
           (q->get<std::optional<std::string>>("c") ? 100 : 0);
  });
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(*good, 42);
}

TEST(Statement, NestedUseOfTheSameSqlGetsItsOwnStatement) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  auto sum = detail::guard(db, "test", [&] {
    std::int64_t total = 0;
    detail::Query outer(db, "SELECT value AS v FROM json_each('[1,2,3]')");
    while (outer->step()) {
      detail::Query inner(db, "SELECT value AS v FROM json_each('[1,2,3]')");
      while (inner->step()) total += outer->get<std::int64_t>("v") * inner->get<std::int64_t>("v");
    }
    return total;
  });
  ASSERT_TRUE(sum.has_value()) << sum.error().to_string();
  EXPECT_EQ(*sum, 36);
}

}  // namespace
}  // namespace perfwatch::store
