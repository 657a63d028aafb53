// Experiments grouped by investigation, and the verdict people are told:
// never "no effect" while a point of the evidence is undecided.
#include "views/investigation_view.h"

#include <gtest/gtest.h>

#include "store/experiment_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "tests/support/temp_dir.h"
#include "views/experiment_view.h"

namespace perfwatch::views {
namespace {

using nlohmann::json;

class Investigations : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::Database::open(dir_ / "pw.db");
    ASSERT_TRUE(opened) << opened.error().to_string();
    db_.emplace(std::move(*opened));
    repo_ = *store::RepoWriter(*db_).ensure_repo({.path = "/src/mla", .name = "mla"});
    store::PointRecord p{.key = "batch=8", .label = "C8", .axes = {{"batch", 8}}};
    point_ = *store::RunWriter(*db_).ensure_point(p);
  }

  store::CommitId commit(int i) {
    store::CommitRecord c{.repo_id = repo_, .sha = std::string(39, 'a') + std::to_string(i), .subject = "c"};
    return *store::RepoWriter(*db_).put_commit(c);
  }

  // An automatic A/B of num_warps=8 at commit `i`, with one evidence point.
  store::ExperimentId warps8(int i, store::ExperimentVerdict verdict, store::ChangeVerdict point) {
    store::ExperimentRecord x{.ident = "auto:" + std::to_string(i) + ":w8", .repo_id = repo_,
                              .hypothesis = "8 warps hide latency", .source = store::ExperimentSource::kAuto,
                              .baseline = {{"variant", "base"}, {"params", {{"num_warps", 4}, {"block_t", 32}}}},
                              .candidates = json::array({{{"name", "w8"}, {"params", {{"num_warps", 8}, {"block_t", 32}}}}}),
                              .verdict = verdict};
    x.refs.push_back({commit(i), std::nullopt, "commit"});
    auto id = store::ExperimentWriter(*db_).put_experiment(x);
    EXPECT_TRUE(id.has_value());
    store::EvidenceRecord e{.candidate = "w8", .point_id = point_, .delta_rel = 0.01, .band_rel = 0.05,
                            .band_calibrated = false, .verdict = point};
    EXPECT_TRUE(store::ExperimentWriter(*db_).set_evidence(*id, std::span(&e, 1)).has_value());
    return *id;
  }

  perfwatch::testing::TempDir dir_{"perfwatch-investigations"};
  std::optional<store::Database> db_;
  store::RepoId repo_ = 0;
  store::PointId point_ = 0;
};

TEST_F(Investigations, TheSameParameterChangeOnEveryCommitIsOneInvestigationNewestFirst) {
  warps8(1, store::ExperimentVerdict::kRejected, store::ChangeVerdict::kRegression);
  warps8(2, store::ExperimentVerdict::kRejected, store::ChangeVerdict::kRegression);
  const auto newest = warps8(3, store::ExperimentVerdict::kNoEffect, store::ChangeVerdict::kUndecided);
  store::ExperimentRecord manual{.repo_id = repo_, .hypothesis = "num_stages=3", .source = store::ExperimentSource::kManual,
                                 .verdict = store::ExperimentVerdict::kRejected};
  ASSERT_TRUE(store::ExperimentWriter(*db_).put_experiment(manual).has_value());

  auto view = investigations_view(*db_, {});
  ASSERT_TRUE(view.has_value()) << view.error().to_string();
  ASSERT_EQ(view->investigations.size(), 2u);
  const Investigation* w8 = nullptr;
  for (const auto& i : view->investigations)
    if (i.kind == "params") w8 = &i;
  ASSERT_NE(w8, nullptr);
  EXPECT_EQ(w8->title, "num_warps=8");
  ASSERT_EQ(w8->history.size(), 3u);
  EXPECT_EQ(w8->history[0].id, newest);
  // Stored no_effect, but its one point is undecided: told "undecided".
  EXPECT_EQ(w8->history[0].verdict, "no_effect");
  EXPECT_EQ(w8->history[0].shown_verdict, "undecided");
  EXPECT_EQ(w8->history[1].shown_verdict, "rejected");
  const json doc = investigations_document(*view);
  EXPECT_EQ(doc["investigations"][0]["verdict"].get<std::string>() == "undecided" ||
                doc["investigations"][1]["verdict"].get<std::string>() == "undecided",
            true);
  EXPECT_NE(investigations_text(*view).find("num_warps=8 [params]: undecided"), std::string::npos)
      << investigations_text(*view);
}

TEST_F(Investigations, NoEffectIsSaidOnlyWhenEveryPointIsDecided) {
  const auto quiet = warps8(1, store::ExperimentVerdict::kNoEffect, store::ChangeVerdict::kWithinNoise);
  const auto open = warps8(2, store::ExperimentVerdict::kNoEffect, store::ChangeVerdict::kUndecided);
  auto q = store::ExperimentReader(*db_).experiment(quiet);
  auto o = store::ExperimentReader(*db_).experiment(open);
  ASSERT_TRUE(q && o);
  EXPECT_EQ(shown_verdict(*q), "no_effect");
  EXPECT_EQ(shown_verdict(*o), "undecided");
  EXPECT_NE(experiment_headlines(*o)[0].find("UNDECIDED"), std::string::npos) << experiment_headlines(*o)[0];
  EXPECT_EQ(experiment_headlines(*o)[0].find("NO EFFECT"), std::string::npos);
}

}  // namespace
}  // namespace perfwatch::views
