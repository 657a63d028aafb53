// Browsing as the users do it, through the API: the testbeds, any declared
// metric with its direction, two commits compared with the verdicts judging
// made (or would make), and the code host's links. Over the fixture with a
// second testbed where the story's slowdown does not happen.
#include <algorithm>
#include <cmath>

#include "web/api.h"
#include "web_test_support.h"

namespace perfwatch::web::testing {
namespace {

using nlohmann::json;

class BrowseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    FixtureSpec spec;
    spec.second_testbed = true;
    db_ = new FixtureDb(spec);
    ServerOptions options = read_only_options(db_->path);
    options.limits.expensive_burst = 1e6;
    options.commit_url = "https://example.invalid/o/r/commit/{sha}";
    running_ = new Running(options);
  }
  static void TearDownTestSuite() {
    delete running_;
    delete db_;
    running_ = nullptr;
    db_ = nullptr;
  }
  httplib::Client& client() { return *running_->client; }
  static const FixtureInfo& info() { return db_->info; }
  std::string first_testbed() const { return std::to_string(db_->info.testbeds.at(0)); }
  std::string second_testbed() const { return std::to_string(db_->info.testbeds.at(1)); }
  // The commit measured just before `sha` (the story's commits are all
  // measured but the docs-only one, which inherits, and the running head).
  std::string previous_of(const std::string& sha) const {
    auto it = std::find(info().shas.begin(), info().shas.end(), sha);
    return *(it - 1);
  }
  static json cells_of(const json& doc, const std::string& variant) {
    json out = json::array();
    for (const auto& c : doc["cells"])
      if (c["variant"] == variant) out.push_back(c);
    return out;
  }

  static FixtureDb* db_;
  static Running* running_;
};
FixtureDb* BrowseTest::db_ = nullptr;
Running* BrowseTest::running_ = nullptr;

TEST_F(BrowseTest, TestbedsAreListedWithDeviceBackendAndHost) {
  auto doc = get_valid(client(), "/api/v1/testbeds", 200, "testbeds");
  ASSERT_EQ(doc["testbeds"].size(), 2u);
  EXPECT_EQ(doc["testbeds"][0]["name"], "fixture-cpu");
  EXPECT_EQ(doc["testbeds"][0]["backend"], "cpu");
  EXPECT_EQ(doc["testbeds"][1]["name"], "fixture-gpu");
  EXPECT_EQ(doc["testbeds"][1]["device_name"], "fixture GPU");
  EXPECT_EQ(doc["testbeds"][1]["hostname"], "fixture-gpu-host");
  // 12 commits: the docs-only one inherits and the head is still running
  // (its run is on the first testbed), so each measured 10 commits.
  EXPECT_EQ(doc["testbeds"][0]["commits"], 10);
  EXPECT_EQ(doc["testbeds"][1]["commits"], 10);
  EXPECT_EQ(doc["testbeds"][1]["runs"], 30);
  expect_error(client(), "/api/v1/testbeds?repo=99", 404, "not_found", "repo");
}

TEST_F(BrowseTest, HistoryOfAnotherMetricHasItsUnitDirectionAndDefaultBand) {
  const std::string point = "/api/v1/history?variant=" + info().baseline_variant + "&point=C1";
  auto judged = get_valid(client(), point, 200, "history");
  EXPECT_EQ(judged["metric"], "time_us");
  EXPECT_EQ(judged["judged_metric"], "time_us");
  EXPECT_TRUE(judged["lower_is_better"]);
  ASSERT_EQ(judged["metrics"].size(), 2u);
  EXPECT_TRUE(judged["band"]["calibrated"]);

  auto tokens = get_valid(client(), point + "&metric=tokens_per_s", 200, "history");
  EXPECT_EQ(tokens["metric"], "tokens_per_s");
  EXPECT_EQ(tokens["unit"], "tokens/s");
  EXPECT_FALSE(tokens["lower_is_better"]);
  EXPECT_EQ(tokens["judged_metric"], "time_us");
  // Judging measured no band for it: the manifest's default, said so.
  EXPECT_FALSE(tokens["band"]["calibrated"]);
  EXPECT_EQ(tokens["band"]["source"], "default");
  ASSERT_EQ(tokens["entries"].size(), judged["entries"].size());
  for (std::size_t i = 0; i < tokens["entries"].size(); ++i) {
    const auto& t = tokens["entries"][i];
    const auto& u = judged["entries"][i];
    ASSERT_EQ(t["sha"], u["sha"]);
    EXPECT_FALSE(t["pooled"]);  // computed from its runs, no CI
    EXPECT_TRUE(t["ci_low"].is_null());
    // At C1 a step processes one token: tokens/s = 1e6 / time_us per trial,
    // so the geomean of the runs' tokens/s medians is 1e6 / the geomean of
    // their time medians up to the trial noise inside each run.
    const double expected = 1e6 / u["geomean_of_run_medians"].get<double>();
    EXPECT_NEAR(t["geomean_of_run_medians"].get<double>() / expected, 1.0, 0.01) << t["sha"];
  }
}

TEST_F(BrowseTest, HistoryEntriesCarryTheChangeToThePreviousCommit) {
  auto doc = get_valid(client(), "/api/v1/history?variant=" + info().baseline_variant + "&point=C8", 200, "history");
  const auto& entries = doc["entries"];
  ASSERT_GE(entries.size(), 5u);
  EXPECT_TRUE(entries[0]["delta_rel"].is_null());
  for (std::size_t i = 1; i < entries.size(); ++i) {
    const double expected = entries[i]["geomean_of_run_medians"].get<double>() /
                            entries[i - 1]["geomean_of_run_medians"].get<double>() - 1;
    EXPECT_NEAR(entries[i]["delta_rel"].get<double>(), expected, 1e-9);
    if (entries[i]["sha"] == info().regression_sha) {
      EXPECT_NEAR(expected, 0.12, 0.03);
    }
  }
}

TEST_F(BrowseTest, HistoryOnTheSecondTestbedHasNoRegression) {
  auto doc = get_valid(client(), "/api/v1/history?variant=" + info().baseline_variant + "&point=C1&testbed=" +
                                     second_testbed(), 200, "history");
  EXPECT_EQ(doc["testbed_id"].get<std::int64_t>(), info().testbeds.at(1));
  for (const auto& e : doc["entries"]) {
    EXPECT_TRUE(e["flag"].is_null()) << e["sha"];
    if (!e["delta_rel"].is_null()) {
      EXPECT_LT(std::fabs(e["delta_rel"].get<double>()), 0.05) << e["sha"];
    }
  }
}

TEST_F(BrowseTest, AnUndeclaredMetricIsRefusedNamingTheDeclaredOnes) {
  for (const std::string& path : std::vector<std::string>{"/api/v1/history?variant=" + info().baseline_variant + "&point=C1&metric=gbps",
                                 "/api/v1/commits/" + info().regression_sha + "?metric=gbps",
                                 std::string("/api/v1/ab?metric=gbps"),
                                 "/api/v1/compare?a=" + info().shas[0] + "&b=" + info().shas[1] + "&metric=gbps"}) {
    auto r = client().Get(path.c_str());
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    auto doc = body_json(r);
    EXPECT_EQ(doc["error"]["field"], "metric") << path;
    const std::string message = doc["error"]["message"];
    EXPECT_NE(message.find("time_us, tokens_per_s"), std::string::npos) << message;
  }
}

TEST_F(BrowseTest, CommitAndAbShowAnyMetric) {
  auto commit = get_valid(client(), "/api/v1/commits/" + info().regression_sha + "?metric=tokens_per_s", 200, "commit");
  EXPECT_EQ(commit["metric"], "tokens_per_s");
  EXPECT_FALSE(commit["lower_is_better"]);
  ASSERT_EQ(commit["table"]["cells"].size(), 18u);
  for (const auto& c : commit["table"]["cells"]) {
    EXPECT_FALSE(c["value"].is_null());
    EXPECT_TRUE(c["comparison"].is_null());  // judging compared time_us only
  }
  auto judged = get_valid(client(), "/api/v1/commits/" + info().regression_sha, 200, "commit");
  EXPECT_EQ(judged["metric"], "time_us");
  for (const auto& c : judged["table"]["cells"]) EXPECT_EQ(c["comparison"]["verdict"], "regression");

  auto ab = get_valid(client(), "/api/v1/ab?commit=" + info().regression_sha + "&metric=tokens_per_s", 200, "ab");
  EXPECT_EQ(ab["metric"], "tokens_per_s");
  for (const auto& row : ab["rows"]) {
    for (const auto& cell : row["cells"]) {
      EXPECT_EQ(cell["from"], "pooled_values");
      // bt32_w8_s3 is slower everywhere: fewer tokens/s than the baseline.
      if (cell["candidate"] == "bt32_w8_s3") {
        EXPECT_LT(cell["delta_rel"].get<double>(), -0.03);
      }
    }
  }
}

TEST_F(BrowseTest, OnTheSecondTestbedTheCommitIsNotARegression) {
  auto doc = get_valid(client(), "/api/v1/commits/" + info().regression_sha + "?testbed=" + second_testbed(), 200,
                       "commit");
  EXPECT_EQ(doc["testbed"]["name"], "fixture-gpu");
  ASSERT_EQ(doc["table"]["cells"].size(), 18u);
  for (const auto& c : doc["table"]["cells"]) EXPECT_NE(c["comparison"]["verdict"], "regression");
}

TEST_F(BrowseTest, CompareShowsWhatJudgingDecidedForAdjacentCommits) {
  const std::string a = previous_of(info().regression_sha), b = info().regression_sha;
  auto doc = get_valid(client(), "/api/v1/compare?a=" + a.substr(0, 8) + "&b=" + b, 200, "compare");
  EXPECT_EQ(doc["a"]["sha"], a);
  EXPECT_EQ(doc["b"]["sha"], b);
  EXPECT_EQ(doc["testbed"]["name"], "fixture-cpu");
  EXPECT_EQ(doc["testbeds"].size(), 2u);
  ASSERT_EQ(doc["cells"].size(), 18u);
  for (const auto& c : doc["cells"]) {
    EXPECT_EQ(c["comparison"]["source"], "judged");
    EXPECT_EQ(c["comparison"]["verdict"], "regression");
    EXPECT_NEAR(c["comparison"]["delta_rel"].get<double>(), 0.12, 0.04);
  }
  // The baseline variant's band is the measured one (3%), the others' the
  // fixture's 5%: what judged each comparison.
  for (const auto& c : cells_of(doc, info().baseline_variant)) EXPECT_DOUBLE_EQ(c["comparison"]["band_rel"], 0.03);
  ASSERT_EQ(doc["range"].size(), 1u);
  EXPECT_EQ(doc["range"][0]["sha"], b);

  auto other = get_valid(client(), "/api/v1/compare?a=" + a + "&b=" + b + "&testbed=" + second_testbed(), 200,
                         "compare");
  EXPECT_EQ(other["testbed"]["name"], "fixture-gpu");
  for (const auto& c : other["cells"]) EXPECT_NE(c["comparison"]["verdict"], "regression");
}

TEST_F(BrowseTest, CompareComputesWithJudgingsBandWhereJudgingDidNot) {
  // The first commit against the slow one: never compared by judging.
  auto doc = get_valid(client(), "/api/v1/compare?a=" + info().shas[0] + "&b=" + info().regression_sha, 200, "compare");
  ASSERT_EQ(doc["cells"].size(), 18u);
  for (const auto& c : doc["cells"]) {
    EXPECT_EQ(c["comparison"]["source"], "computed");
    EXPECT_EQ(c["comparison"]["runs_a"], 3);
    EXPECT_EQ(c["comparison"]["runs_b"], 3);
    EXPECT_GT(c["comparison"]["delta_rel"].get<double>(), 0.06);
  }
  EXPECT_EQ(doc["range"].size(), 4u);  // commits 1 to 4

  // tokens/s: higher is better, so the same slowdown is a drop, judged
  // against the manifest's default band. Uncalibrated, the test is Welch's
  // on 3 vs 3 runs: a 10% drop is beyond the band everywhere, but not
  // always significant at alpha = 0.001 (p 0.001 - 0.004): those cells stay
  // undecided, never within noise or better.
  auto tokens = get_valid(client(), "/api/v1/compare?a=" + info().shas[0] + "&b=" + info().regression_sha +
                                        "&metric=tokens_per_s", 200, "compare");
  EXPECT_FALSE(tokens["lower_is_better"]);
  int regressions = 0;
  for (const auto& c : tokens["cells"]) {
    EXPECT_EQ(c["comparison"]["source"], "computed");
    EXPECT_FALSE(c["comparison"]["band_calibrated"]);
    EXPECT_LT(c["comparison"]["delta_rel"].get<double>(), -0.06);
    const std::string verdict = c["comparison"]["verdict"];
    EXPECT_TRUE(verdict == "regression" || verdict == "undecided") << verdict;
    regressions += verdict == "regression";
  }
  EXPECT_GE(regressions, 6) << tokens["cells"].dump();
}

TEST_F(BrowseTest, CompareListsTheInheritedCommitsBetween) {
  // hostile (5) -> docs (6, inherits 5) -> revert (7).
  auto doc = get_valid(client(), "/api/v1/compare?a=" + info().hostile_sha + "&b=" + info().revert_sha, 200, "compare");
  ASSERT_EQ(doc["range"].size(), 2u);
  EXPECT_EQ(doc["range"][0]["sha"], info().docs_sha);
  EXPECT_EQ(doc["range"][0]["inherited_from"], info().hostile_sha);
  EXPECT_EQ(doc["range"][1]["sha"], info().revert_sha);
  // Against the docs commit, whose results are the hostile one's: judging
  // compared the revert with that one.
  auto via = get_valid(client(), "/api/v1/compare?a=" + info().docs_sha + "&b=" + info().revert_sha, 200, "compare");
  EXPECT_EQ(via["a"]["inherited_from"], info().hostile_sha);
  for (const auto& c : via["cells"]) EXPECT_EQ(c["comparison"]["source"], "judged");
  // Backwards: b is older, so a is not on b's line.
  auto back = get_valid(client(), "/api/v1/compare?a=" + info().revert_sha + "&b=" + info().hostile_sha, 200, "compare");
  EXPECT_TRUE(back["range"].is_null());
}

TEST_F(BrowseTest, CompareSaysWhichParameterIsWrong) {
  expect_error(client(), "/api/v1/compare?b=" + info().shas[1], 400, "bad_parameter", "a");
  expect_error(client(), "/api/v1/compare?a=" + info().shas[0], 400, "bad_parameter", "b");
  expect_error(client(), "/api/v1/compare?a=" + info().shas[0] + "&b=abcdef0123", 404, "not_found", "b");
  expect_error(client(), "/api/v1/compare?a=xyz&b=" + info().shas[1], 400, "bad_parameter", "a");
  expect_error(client(), "/api/v1/compare?a=" + info().shas[0] + "&b=" + info().shas[1] + "&testbed=99", 404,
               "not_found", "testbed");
  expect_error(client(), "/api/v1/compare?a=" + info().shas[0] + "&b=" + info().shas[1] + "&c=1", 400,
               "bad_parameter", "c");
}

TEST_F(BrowseTest, RunCellsCarryTheChangeOfEveryMetric) {
  auto doc = get_valid(client(), "/api/v1/runs/" + std::to_string(info().ok_runs.back()), 200, "run");
  ASSERT_EQ(doc["metrics"].size(), 2u);
  for (const auto& c : doc["cells"]) {
    if (c["variant"] == info().baseline_variant) {
      EXPECT_TRUE(c["deltas_vs_baseline"].empty());
      continue;
    }
    ASSERT_TRUE(c["deltas_vs_baseline"].contains("tokens_per_s"));
    EXPECT_DOUBLE_EQ(c["deltas_vs_baseline"]["time_us"], c["delta_vs_baseline"]);
    // A slower variant makes fewer tokens a second, by the same ratio up to trial noise.
    const double time = c["deltas_vs_baseline"]["time_us"], tokens = c["deltas_vs_baseline"]["tokens_per_s"];
    EXPECT_NEAR((1 + time) * (1 + tokens), 1.0, 0.02);
  }
}

TEST_F(BrowseTest, HealthzCarriesTheCommitUrlTemplate) {
  auto doc = get_valid(client(), "/healthz", 200, "healthz");
  EXPECT_EQ(doc["commit_url"], "https://example.invalid/o/r/commit/{sha}");
}

TEST(CommitUrl, OnlyAnHttpTemplateWithAShaIsAccepted) {
  EXPECT_TRUE(check_commit_url("https://github.com/o/r/commit/{sha}"));
  EXPECT_TRUE(check_commit_url("http://gitlab.local/o/r/-/commit/{sha}"));
  for (const char* bad : {"javascript:alert(1)//{sha}", "https://github.com/o/r/commit/", "github.com/o/r/{sha}",
                          "https://x/{sha}\"><script>", "https://x/{sha} y", "https://x/{sha}'"}) {
    auto r = check_commit_url(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().where, "--commit-url") << bad;
    EXPECT_NE(r.error().message.find("{sha}"), std::string::npos) << r.error().message;
  }
  // Checked before anything else: no database is needed to be refused.
  ServerOptions options = read_only_options("/nonexistent/perfwatch.db");
  options.commit_url = "ftp://x/{sha}";
  auto started = Server::start(options);
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().where, "--commit-url");
}

}  // namespace
}  // namespace perfwatch::web::testing
