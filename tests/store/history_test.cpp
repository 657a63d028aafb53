// The reads over a branch's history: point history (runs, pooled value,
// band, flag, inheritance), the commit list with status and cost, the
// previous measured commit, a run's table, run against run, metrics -- and
// the query plans that keep them fast.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <regex>

#include "store/analysis_store.h"
#include "store/detail/statement.h"
#include "store/history_store.h"
#include "store/queue_store.h"
#include "store/read_pool.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

// main: c1 <- c2 <- c3 (docs only: inherits c2) <- c4 (slower at b64: flagged) <- c5 (queued)
class History : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Database::open(tmp_.path(), {.clock = [this] { return now_; }});
    ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
    db_ = std::make_unique<Database>(std::move(*opened));
    Seed();
  }

  void Seed() {
    RepoWriter repos(*db_);
    RunWriter runs(*db_);
    AnalysisWriter analysis(*db_);
    repo_ = *repos.ensure_repo({.path = "/src/mla", .name = "mla"});
    testbed_ = *runs.ensure_testbed({.name = "cpu-a", .hostname = "a", .backend = Backend::kCpu, .device_name = "x86"});
    b1_ = *runs.ensure_point(testing::point_record(1));
    b64_ = *runs.ensure_point(testing::point_record(64));
    for (int i = 1; i <= 5; ++i) {
      CommitRecord c{.repo_id = repo_, .sha = testing::sha_of(i), .parent_sha = i > 1 ? testing::sha_of(i - 1) : "",
                     .author = "ada", .committed_at = 1000 + i, .subject = "commit " + std::to_string(i)};
      commits_[i] = *repos.put_commit(c);
    }
    ASSERT_TRUE(repos.set_branch_head(repo_, "main", testing::sha_of(5)));
    ASSERT_TRUE(repos.set_inherited_from(commits_[3], commits_[2]));
    // time_us at b64 per commit: c4 is 20% slower.
    const double base_us[] = {0, 100, 101, 0, 121};
    for (int i : {1, 2, 4}) {
      for (int r = 0; r < 3; ++r) {
        RunId run = *runs.start_run({.commit_id = commits_[i], .testbed_id = testbed_, .kind = RunKind::kBench});
        VariantId base = *runs.add_variant({.run_id = run, .name = "base", .is_baseline = true});
        VariantId w8 = *runs.add_variant({.run_id = run, .name = "w8", .params = {{"num_warps", 8}}});
        for (auto [v, factor] : {std::pair{base, 1.0}, std::pair{w8, 1.15}})
          for (auto [p, scale] : {std::pair{b1_, 0.1}, std::pair{b64_, 1.0}}) {
            double median = base_us[i] * factor * scale * (1 + 0.001 * r);
            for (int t = 1; t <= 4; ++t)
              ASSERT_TRUE(runs.insert_trial(testing::trial_record(run, v, p, t, median)));
            ASSERT_TRUE(analysis.put_summary({.run_id = run, .variant_id = v, .point_id = p, .metric = "time_us",
                                              .n = 4, .median = median, .ci_low = median * 0.99,
                                              .ci_high = median * 1.01}));
          }
        // c2's third run crashed: it has a summary but must not count.
        RunStatus status = (i == 2 && r == 2) ? RunStatus::kCrashed : RunStatus::kOk;
        ASSERT_TRUE(runs.finish_run(run, {.status = status, .wall_s = 2.0}));
        runs_[i].push_back(run);
      }
      ASSERT_TRUE(analysis.put_commit_summary({.commit_id = commits_[i], .testbed_id = testbed_, .variant = "base",
                                               .point_id = b64_, .metric = "time_us", .runs = 3,
                                               .geomean_of_run_medians = base_us[i], .ci_low = base_us[i] - 1,
                                               .ci_high = base_us[i] + 1}));
    }
    ASSERT_TRUE(analysis.put_noise_band({.testbed_id = testbed_, .variant = "base", .point_id = b64_,
                                         .band_rel = 0.03, .method = "A/A K=6", .k_runs = 6, .calibrated = true,
                                         .source = NoiseSource::kAa}));
    auto cmp = analysis.put_comparison({.commit_id = commits_[4], .against_commit_id = commits_[2],
                                        .testbed_id = testbed_, .variant = "base", .point_id = b64_, .ratio = 1.198,
                                        .runs = 3, .against_runs = 2, .verdict = ChangeVerdict::kRegression});
    ASSERT_TRUE(cmp);
    ASSERT_TRUE(analysis.raise_flag({.commit_id = commits_[4], .testbed_id = testbed_, .variant = "base",
                                     .point_id = b64_, .kind = FlagKind::kRegression, .magnitude_rel = 0.198,
                                     .comparison_id = *cmp}));
    ASSERT_TRUE(JobQueue(*db_).enqueue({.repo_id = repo_, .commit_sha = testing::sha_of(5), .branch = "main"}));
  }

  HistoryQuery query(std::string variant = "base", std::string point = "batch=64") {
    HistoryQuery q;
    q.start = {.repo_id = repo_, .branch = "main"};
    q.variant = std::move(variant);
    q.point_key = std::move(point);
    return q;
  }

  TempDbPath tmp_;
  UnixSeconds now_ = 5000;
  std::unique_ptr<Database> db_;
  RepoId repo_ = 0;
  TestbedId testbed_ = 0;
  PointId b1_ = 0, b64_ = 0;
  std::map<int, CommitId> commits_;
  std::map<int, std::vector<RunId>> runs_;
};

TEST_F(History, PointHistoryInFirstParentOrderWithInheritanceFlagAndBand) {
  PW_UNWRAP(h, HistoryReader(*db_).point_history(query()));
  EXPECT_EQ(h.testbed_id, testbed_);  // picked from the newest measured run
  ASSERT_TRUE(h.band.has_value());
  EXPECT_DOUBLE_EQ(h.band->band_rel, 0.03);
  EXPECT_TRUE(h.band->calibrated);
  ASSERT_EQ(h.entries.size(), 4u);  // c5 has nothing yet
  std::vector<std::string> shas;
  for (const auto& e : h.entries) shas.push_back(e.sha);
  EXPECT_EQ(shas, (std::vector<std::string>{testing::sha_of(1), testing::sha_of(2), testing::sha_of(3),
                                            testing::sha_of(4)}));
  // c1: three ok runs with their medians, oldest first, and the pooled value.
  ASSERT_EQ(h.entries[0].runs.size(), 3u);
  EXPECT_EQ(h.entries[0].runs[0].run_id, runs_[1][0]);
  EXPECT_DOUBLE_EQ(h.entries[0].runs[0].median, 100.0);
  EXPECT_DOUBLE_EQ(h.entries[0].runs[2].median, 100.2);
  ASSERT_TRUE(h.entries[0].pooled.has_value());
  EXPECT_DOUBLE_EQ(h.entries[0].pooled->geomean_of_run_medians, 100.0);
  // c2: its crashed run is left out.
  EXPECT_EQ(h.entries[1].runs.size(), 2u);
  // c3 touched none of the paths: it shows c2's values and says so.
  EXPECT_EQ(h.entries[2].inherited_from, commits_[2]);
  EXPECT_EQ(h.entries[2].runs.size(), 2u);
  EXPECT_EQ(h.entries[2].runs[0].run_id, runs_[2][0]);
  ASSERT_TRUE(h.entries[2].pooled.has_value());
  EXPECT_DOUBLE_EQ(h.entries[2].pooled->geomean_of_run_medians, 101.0);
  EXPECT_FALSE(h.entries[2].flag.has_value());
  // c4: flagged.
  ASSERT_TRUE(h.entries[3].flag.has_value());
  EXPECT_EQ(h.entries[3].flag->kind, FlagKind::kRegression);
  EXPECT_DOUBLE_EQ(h.entries[3].runs[0].median, 121.0);

  auto q = query();
  q.include_unmeasured = true;
  PW_UNWRAP(all, HistoryReader(*db_).point_history(q));
  ASSERT_EQ(all.entries.size(), 5u);
  EXPECT_TRUE(all.entries[4].runs.empty());
  q.limit = 2;  // the two newest commits: c5 and c4
  PW_UNWRAP(recent, HistoryReader(*db_).point_history(q));
  ASSERT_EQ(recent.entries.size(), 2u);
  EXPECT_EQ(recent.entries[0].sha, testing::sha_of(4));
}

TEST_F(History, PointHistoryOfAnotherVariantAndTheErrors) {
  PW_UNWRAP(h, HistoryReader(*db_).point_history(query("w8", "batch=1")));
  ASSERT_EQ(h.entries.size(), 4u);
  EXPECT_NEAR(h.entries[0].runs[0].median, 100 * 1.15 * 0.1, 1e-9);
  EXPECT_FALSE(h.band.has_value());          // not calibrated: the manifest's default applies
  EXPECT_FALSE(h.entries[0].pooled.has_value());
  EXPECT_EQ(HistoryReader(*db_).point_history(query("base", "b7_nope")).error().code, ErrorCode::kNotFound);
  auto q = query();
  q.start.branch = "nope";
  EXPECT_EQ(HistoryReader(*db_).point_history(q).error().code, ErrorCode::kNotFound);
  // A variant never run: no testbed, no entries, no error.
  PW_UNWRAP(none, HistoryReader(*db_).point_history(query("never")));
  EXPECT_FALSE(none.testbed_id.has_value());
  EXPECT_TRUE(none.entries.empty());
}

TEST_F(History, CommitsWithStatusAndCost) {
  PW_UNWRAP(list, HistoryReader(*db_).commits({.repo_id = repo_, .branch = "main"}, 10));
  ASSERT_EQ(list.size(), 5u);
  EXPECT_EQ(list[0].commit.sha, testing::sha_of(5));  // newest first
  EXPECT_EQ(list[0].runs, 0);
  EXPECT_EQ(list[0].latest_job_state, JobState::kQueued);
  const auto& c4 = list[1];
  EXPECT_EQ(c4.runs, 3);
  EXPECT_EQ(c4.trials, 3 * 2 * 2 * 4);
  EXPECT_DOUBLE_EQ(c4.wall_s, 6.0);
  EXPECT_EQ(c4.open_regressions, 1);
  EXPECT_EQ(c4.latest_run_status, RunStatus::kOk);
  const auto& c3 = list[2];
  EXPECT_EQ(c3.runs, 0);
  EXPECT_EQ(c3.commit.inherited_from, commits_[2]);
  const auto& c2 = list[3];
  EXPECT_EQ(c2.runs_by_status.at(RunStatus::kOk), 2);
  EXPECT_EQ(c2.runs_by_status.at(RunStatus::kCrashed), 1);
  EXPECT_EQ(c2.latest_run_status, RunStatus::kCrashed);
  PW_UNWRAP(page, HistoryReader(*db_).commits({.repo_id = repo_, .branch = "main"}, 2, 3));
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].commit.sha, testing::sha_of(2));
  EXPECT_EQ(page[1].commit.sha, testing::sha_of(1));
  PW_UNWRAP(chain, HistoryReader(*db_).chain({.repo_id = repo_, .head_sha = testing::sha_of(3)}, 100));
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[2].sha, testing::sha_of(1));
}

TEST_F(History, PreviousMeasuredCommitSkipsInheritingCommits) {
  HistoryReader h(*db_);
  EXPECT_EQ(h.previous_measured(commits_[5], testbed_)->value().id, commits_[4]);
  EXPECT_EQ(h.previous_measured(commits_[4], testbed_)->value().id, commits_[2]);  // not c3
  EXPECT_EQ(h.previous_measured(commits_[3], testbed_)->value().id, commits_[2]);
  EXPECT_EQ(h.previous_measured(commits_[2], testbed_)->value().id, commits_[1]);
  PW_UNWRAP(none, h.previous_measured(commits_[1], testbed_));
  EXPECT_FALSE(none.has_value());
  PW_UNWRAP(no_noise, h.previous_measured(commits_[5], testbed_, RunKind::kNoise));
  EXPECT_FALSE(no_noise.has_value());
}

TEST_F(History, RunTableAndRunAgainstRun) {
  RunReader reader(*db_);
  PW_UNWRAP(table, reader.table(runs_[1][0]));
  EXPECT_EQ(table.variants.size(), 2u);
  EXPECT_EQ(table.variants[0].name, "base");  // the baseline first
  ASSERT_EQ(table.points.size(), 2u);
  EXPECT_EQ(table.points[0].key, "batch=1");  // sweep order
  ASSERT_EQ(table.cells.size(), 4u);
  for (const auto& cell : table.cells) {
    EXPECT_TRUE(cell.summary.has_value());
    EXPECT_EQ(cell.trials, 4);
  }
  PW_UNWRAP(pair, reader.compare_runs(runs_[1][0], runs_[4][0]));
  ASSERT_EQ(pair.size(), 4u);
  for (const auto& row : pair) {
    ASSERT_TRUE(row.ratio.has_value()) << row.variant << " " << row.point.key;
    EXPECT_NEAR(*row.ratio, 1.21, 1e-9);
  }
  EXPECT_EQ(reader.compare_runs(runs_[1][0], 999).error().code, ErrorCode::kNotFound);
}

TEST_F(History, Metrics) {
  PW_UNWRAP(m, HistoryReader(*db_).metrics());
  EXPECT_EQ(m.jobs_by_state.at(JobState::kQueued), 1);
  EXPECT_EQ(m.jobs_by_state.at(JobState::kRunning), 0);
  EXPECT_EQ(m.runs_by_status.at(RunStatus::kOk), 8);
  EXPECT_EQ(m.runs_by_status.at(RunStatus::kCrashed), 1);
  EXPECT_EQ(m.last_run_finished_at, now_);
  EXPECT_EQ(m.open_regressions, 1);
}

TEST_F(History, ReadPoolServesManyThreads) {
  PW_UNWRAP(pool, ReadPool::open(tmp_.path(), 2));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 5; ++k) {
        auto lease = pool->lease();
        if (!lease) return;
        auto h = HistoryReader(lease->db()).point_history(query());
        if (h && h->entries.size() == 4) ++ok;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 30);
}

// The plan of every statement a history read prepared: no table scanned but
// the recursive chain itself, and trials never touched.
std::vector<std::string> plans_of_cached_statements(Database& db) {
  std::vector<std::string> lines;
  for (const auto& sql : detail::Access::cached_sql(db)) {
    sqlite3_stmt* s = nullptr;
    std::string explain = "EXPLAIN QUERY PLAN " + sql;
    EXPECT_EQ(sqlite3_prepare_v2(detail::Access::handle(db), explain.c_str(), -1, &s, nullptr), SQLITE_OK);
    while (sqlite3_step(s) == SQLITE_ROW)
      lines.push_back(reinterpret_cast<const char*>(sqlite3_column_text(s, 3)) + std::string("    <- ") +
                      sql.substr(0, 60));
    sqlite3_finalize(s);
  }
  return lines;
}

TEST_F(History, PointHistoryUsesIndexesAndNeverReadsTrials) {
  PW_UNWRAP(reader, Database::open_read_only(tmp_.path()));  // a fresh cache holds only this read's statements
  PW_UNWRAP(h, HistoryReader(reader).point_history(query()));
  ASSERT_EQ(h.entries.size(), 4u);
  auto lines = plans_of_cached_statements(reader);
  if (std::getenv("PW_PRINT_PLANS"))
    for (const auto& line : lines) std::printf("%s\n", line.c_str());
  ASSERT_GT(lines.size(), 10u);
  const std::regex scan(R"(^SCAN (\w+))");
  int searches = 0;
  for (const auto& line : lines) {
    SCOPED_TRACE(line);
    std::smatch m;
    // The CTE's own queue and its seed row; no table.
    if (std::regex_search(line, m, scan)) {
      EXPECT_TRUE(m[1] == "chain" || m[1] == "CONSTANT");
    }
    EXPECT_EQ(line.find("trials"), std::string::npos);
    if (line.starts_with("SEARCH")) ++searches;
    // Runs by commit and flags by commit: never all runs of a status or all
    // flags of a point, which grow with the history.
    if (line.starts_with("SEARCH r ")) {
      EXPECT_NE(line.find("runs_by_commit (commit_id=?"), std::string::npos);
    }
    if (line.starts_with("SEARCH f ") && line.find("(rowid=?)") == std::string::npos) {
      EXPECT_NE(line.find("(commit_id=? AND testbed_id=? AND variant=? AND point_id=?"), std::string::npos);
    }
    if (line.starts_with("SEARCH s ")) {
      EXPECT_NE(line.find("PRIMARY KEY (variant_id=? AND point_id=?)"), std::string::npos);
    }
  }
  // runs, run_variants, summaries, commits, commit_summaries, flags, noise_bands, points, branches
  EXPECT_GE(searches, 9);
}

TEST_F(History, CommitListAndMetricsPlansScanNoLargeTable) {
  PW_UNWRAP(reader, Database::open_read_only(tmp_.path()));
  PW_ASSERT_OK(HistoryReader(reader).commits({.repo_id = repo_, .branch = "main"}, 50));
  PW_ASSERT_OK(AnalysisReader(reader).run_medians(commits_[1], testbed_));
  PW_ASSERT_OK(RunReader(reader).table(runs_[1][0]));
  for (const auto& line : plans_of_cached_statements(reader)) {
    SCOPED_TRACE(line);
    for (const char* table : {"trials", "summaries", "runs", "run_variants", "commits", "flags", "jobs", "builds"})
      EXPECT_FALSE(line.starts_with(std::string("SCAN ") + table + " ") || line == std::string("SCAN ") + table);
  }
}

}  // namespace
}  // namespace perfwatch::store
