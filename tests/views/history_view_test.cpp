// A history never mixes statistics: every entry's value is the geometric
// mean of the commit's run medians -- the stored one of a judged commit, and
// the same statistic computed from the runs of a commit not judged yet (not
// the median of its run medians, which is what the route served before).
#include <gtest/gtest.h>

#include <cmath>

#include "store/analysis_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "tests/support/temp_dir.h"
#include "views/history_view.h"
#include "web_test_support.h"

namespace perfwatch::views {
namespace {

using nlohmann::json;

// main: c1 (judged: a stored pooled value) <- c2 (three ok runs, not judged yet).
class HistoryStatistic : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::Database::open(path_);
    ASSERT_TRUE(opened) << opened.error().to_string();
    db_.emplace(std::move(*opened));
    store::RepoWriter repos(*db_);
    store::RunWriter runs(*db_);
    store::AnalysisWriter analysis(*db_);
    auto repo = repos.ensure_repo({.path = "/src/mla", .url = "", .name = "mla", .created_at = 0});
    ASSERT_TRUE(repo);
    store::TestbedRecord tb;
    tb.name = "cpu-a";
    auto testbed = runs.ensure_testbed(tb);
    ASSERT_TRUE(testbed);
    store::PointRecord p;
    p.key = "batch=8";
    p.label = "C8";
    p.axes = {{"batch", 8}};
    auto point = runs.ensure_point(p);
    ASSERT_TRUE(point);
    point_id_ = *point;
    for (int i = 1; i <= 2; ++i) {
      store::CommitRecord c;
      c.repo_id = *repo;
      c.sha = std::string(39, '0') + std::to_string(i);
      c.parent_sha = i > 1 ? std::string(39, '0') + std::to_string(i - 1) : "";
      c.subject = "commit " + std::to_string(i);
      auto id = repos.put_commit(c);
      ASSERT_TRUE(id);
      // Run medians whose median (100) is far from their geometric mean.
      for (double median : {100.0, 100.0, 160.0}) {
        store::RunRecord r;
        r.commit_id = *id;
        r.testbed_id = *testbed;
        auto run = runs.start_run(r);
        ASSERT_TRUE(run);
        store::VariantRecord v;
        v.run_id = *run;
        v.name = "base";
        v.is_baseline = true;
        auto variant = runs.add_variant(v);
        ASSERT_TRUE(variant);
        store::SummaryRecord s;
        s.run_id = *run;
        s.variant_id = *variant;
        s.point_id = *point;
        s.metric = "time_us";
        s.n = 5;
        s.median = median;
        ASSERT_TRUE(analysis.put_summary(s));
        store::RunOutcome ok;
        ok.wall_s = 1;
        ASSERT_TRUE(runs.finish_run(*run, ok));
      }
      if (i == 1) {
        store::CommitSummaryRecord pooled;
        pooled.commit_id = *id;
        pooled.testbed_id = *testbed;
        pooled.variant = "base";
        pooled.point_id = *point;
        pooled.metric = "time_us";
        pooled.runs = 3;
        pooled.geomean_of_run_medians = kGeomean;
        pooled.ci_low = 90;
        pooled.ci_high = 150;
        ASSERT_TRUE(analysis.put_commit_summary(pooled));
      }
    }
    ASSERT_TRUE(repos.set_branch_head(*repo, "main", std::string(39, '0') + "2"));
  }

  const double kGeomean = std::cbrt(100.0 * 100.0 * 160.0);  // 116.96...
  perfwatch::testing::TempDir dir_{"perfwatch-views-test"};
  std::filesystem::path path_ = dir_ / "history.db";
  std::optional<store::Database> db_;
  store::PointId point_id_ = 0;
};

TEST_F(HistoryStatistic, EveryEntryIsTheGeomeanOfRunMedians) {
  HistoryRequest r;
  r.variant = "base";
  r.point = "batch=8";  // by its key
  auto view = history_view(*db_, r);
  ASSERT_TRUE(view) << view.error().to_string();
  ASSERT_EQ(view->values.size(), 2u);
  EXPECT_TRUE(view->values[0].pooled);
  EXPECT_DOUBLE_EQ(*view->values[0].geomean_of_run_medians, kGeomean);
  EXPECT_EQ(view->values[0].ci_low, 90.0);
  EXPECT_FALSE(view->values[1].pooled);
  EXPECT_NEAR(*view->values[1].geomean_of_run_medians, kGeomean, 1e-9);  // not 100, the median
  EXPECT_FALSE(view->values[1].ci_low.has_value());
  EXPECT_EQ(view->values[1].runs, 3);

  // As the route serves it, and as the CLI prints it.
  const json doc = json::parse(history_document(*view));
  EXPECT_TRUE(web::testing::matches_schema(doc, "history"));
  EXPECT_EQ(doc["statistic"], "geomean_of_run_medians");
  EXPECT_NEAR(doc["entries"][1]["geomean_of_run_medians"].get<double>(), kGeomean, 1e-9);
  EXPECT_FALSE(doc["entries"][1]["pooled"].get<bool>());
  EXPECT_EQ(doc["entries"][1]["runs"][0]["median"], 100.0);  // a run's own value stays its median
  EXPECT_FALSE(doc["entries"][0].contains("median"));
  const std::string text = history_text(*view);
  EXPECT_NE(text.find("geometric mean of the commit's run medians"), std::string::npos) << text;
  EXPECT_NE(text.find("117.0*"), std::string::npos) << text;  // not judged yet: marked
}

TEST_F(HistoryStatistic, TheRouteServesTheSameStatistic) {
  web::testing::Running running(web::testing::read_only_options(path_));
  const json doc = web::testing::get_valid(*running.client, "/api/v1/history?variant=base&point=C8",
                                           200, "history");
  ASSERT_EQ(doc["entries"].size(), 2u);
  for (const auto& e : doc["entries"]) EXPECT_NEAR(e["geomean_of_run_medians"].get<double>(), kGeomean, 1e-9);
}

}  // namespace
}  // namespace perfwatch::views
