// "Did we ever try num_warps=8? What happened?" -- experiments found by
// text, parameter, verdict, date and commit.
#include <gtest/gtest.h>

#include "store/experiment_store.h"
#include "store/repo_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

class Experiments : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Database::open(tmp_.path(), {.clock = [this] { return now_; }});
    ASSERT_TRUE(opened.has_value()) << opened.error().to_string();
    db_ = std::make_unique<Database>(std::move(*opened));
    RepoWriter repos(*db_);
    repo_ = *repos.ensure_repo({.path = "/r", .name = "r"});
    commit_ = *repos.put_commit({.repo_id = repo_, .sha = testing::sha_of(1)});
    ExperimentWriter w(*db_);
    auto add = [&](std::string ident, std::string hypothesis, nlohmann::json params, ExperimentVerdict verdict,
                   ExperimentSource source, std::string conclusion = "") {
      now_ += 100;
      ExperimentRecord e{.ident = std::move(ident), .repo_id = repo_, .hypothesis = std::move(hypothesis),
                         .source = source,
                         .baseline = {{"variant", "base"}, {"params", {{"num_warps", 4}, {"num_stages", 2}}}},
                         .candidates = nlohmann::json::array({{{"name", "cand"}, {"params", std::move(params)}}}),
                         .verdict = verdict, .conclusion = std::move(conclusion)};
      auto id = w.put_experiment(e);
      EXPECT_TRUE(id.has_value());
      return *id;
    };
    warps8_ = add("auto:1:w8", "num_warps=8 hides memory latency", {{"num_warps", 8}, {"block_t", 64}},
                  ExperimentVerdict::kRejected, ExperimentSource::kAuto,
                  "REJECTED: -14..-18% at low C, registers spill");
    stages3_ = add("auto:1:s3", "a third pipeline stage overlaps loads", {{"num_stages", 3}},
                   ExperimentVerdict::kRejected, ExperimentSource::kAuto, "REJECTED: -9.9% at C64");
    block128_ = add("", "BLOCK_T=128 halves the combine work", {{"block_t", 128}, {"num_warps", 4}},
                    ExperimentVerdict::kAccepted, ExperimentSource::kManual);
    pending_ = add("trailer:warps-2", "split-KV target 264 CTAs", {{"target_ctas", 264}}, ExperimentVerdict::kPending,
                   ExperimentSource::kTrailer);
    ASSERT_TRUE(w.add_ref(block128_, {.commit_id = commit_, .role = "candidate"}));
  }

  std::vector<ExperimentId> ids(const ExperimentFilter& f) {
    auto found = ExperimentReader(*db_).search(f);
    EXPECT_TRUE(found.has_value()) << found.error().to_string();
    std::vector<ExperimentId> out;
    if (found)
      for (const auto& e : *found) out.push_back(e.id);
    return out;
  }

  TempDbPath tmp_;
  UnixSeconds now_ = 10'000;
  std::unique_ptr<Database> db_;
  RepoId repo_ = 0;
  CommitId commit_ = 0;
  ExperimentId warps8_ = 0, stages3_ = 0, block128_ = 0, pending_ = 0;
};

TEST_F(Experiments, AllNewestFirst) {
  EXPECT_EQ(ids({}), (std::vector<ExperimentId>{pending_, block128_, stages3_, warps8_}));
  EXPECT_EQ(ids({.limit = 2, .offset = 1}), (std::vector<ExperimentId>{block128_, stages3_}));
}

TEST_F(Experiments, ByParameter) {
  EXPECT_EQ(ids({.params = {{"num_warps", "8"}}}), std::vector<ExperimentId>{warps8_});
  // num_warps=4 is a baseline value everywhere, but a candidate's only in block128.
  EXPECT_EQ(ids({.params = {{"num_warps", "4"}}}), std::vector<ExperimentId>{block128_});
  EXPECT_EQ(ids({.params = {{"num_warps", "8"}, {"block_t", "64"}}}), std::vector<ExperimentId>{warps8_});
  EXPECT_TRUE(ids({.params = {{"num_warps", "8"}, {"block_t", "128"}}}).empty());
  EXPECT_TRUE(ids({.params = {{"num_warps", "16"}}}).empty());
  auto bad = ExperimentReader(*db_).search({.params = {{"num_warps') OR 1=1 --", "8"}}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(Experiments, ByTextInHypothesisConclusionAndCandidates) {
  EXPECT_EQ(ids({.text = "latency"}), std::vector<ExperimentId>{warps8_});
  EXPECT_EQ(ids({.text = "REJECTED"}), (std::vector<ExperimentId>{stages3_, warps8_}));
  EXPECT_EQ(ids({.text = "rejected C64"}), std::vector<ExperimentId>{stages3_});  // every word must occur
  EXPECT_EQ(ids({.text = "num_warps=8"}), std::vector<ExperimentId>{warps8_});    // punctuation is text
  EXPECT_EQ(ids({.text = "spill"}), std::vector<ExperimentId>{warps8_});          // prefix of "spills"
  EXPECT_EQ(ids({.text = "\"unbalanced quote AND ("}), std::vector<ExperimentId>{});
  // A conclusion written later is found too.
  ASSERT_TRUE(ExperimentWriter(*db_).conclude(pending_, ExperimentVerdict::kNoEffect, "no effect beyond the band"));
  EXPECT_EQ(ids({.text = "band"}), std::vector<ExperimentId>{pending_});
}

TEST_F(Experiments, ByVerdictSourceDateAndCommit) {
  EXPECT_EQ(ids({.verdict = ExperimentVerdict::kRejected}), (std::vector<ExperimentId>{stages3_, warps8_}));
  EXPECT_EQ(ids({.verdict = ExperimentVerdict::kAccepted}), std::vector<ExperimentId>{block128_});
  EXPECT_EQ(ids({.source = ExperimentSource::kTrailer}), std::vector<ExperimentId>{pending_});
  // created at 10100, 10200, 10300, 10400
  EXPECT_EQ(ids({.since = 10'200, .until = 10'400}), (std::vector<ExperimentId>{block128_, stages3_}));
  EXPECT_EQ(ids({.commit_id = commit_}), std::vector<ExperimentId>{block128_});
  EXPECT_EQ(ids({.text = "rejected", .params = {{"num_stages", "3"}}}), std::vector<ExperimentId>{stages3_});
}

}  // namespace
}  // namespace perfwatch::store
