// The JSON API against a read-only server over the fixture database: every
// response is checked against its schema, and against what the fixture
// stored.
#include <algorithm>

#include "web_test_support.h"

namespace perfwatch::web::testing {
namespace {

using nlohmann::json;

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = new FixtureDb();
    // Many expensive requests in a few milliseconds: the rate limit has its
    // own test (security_test.cpp).
    ServerOptions options = read_only_options(db_->path);
    options.limits.expensive_burst = 1e6;
    running_ = new Running(options);
  }
  static void TearDownTestSuite() {
    delete running_;  // stops and joins the server
    delete db_;
    running_ = nullptr;
    db_ = nullptr;
  }
  httplib::Client& client() { return *running_->client; }
  const FixtureInfo& info() { return db_->info; }
  // A point's key ("batch=1") as a query value: '=' and ',' percent-encoded, as a browser does.
  static std::string encoded(const std::string& value) {
    std::string out;
    for (char c : value) out += c == '=' ? "%3D" : c == ',' ? "%2C" : std::string(1, c);
    return out;
  }
  std::string history_path(const std::string& variant, const std::string& point, const std::string& extra = "") {
    return "/api/v1/history?variant=" + variant + "&point=" + encoded(point) + extra;
  }

  static FixtureDb* db_;
  static Running* running_;
};
FixtureDb* ApiTest::db_ = nullptr;
Running* ApiTest::running_ = nullptr;

TEST_F(ApiTest, HealthzSaysReadOnly) {
  auto doc = get_valid(client(), "/healthz", 200, "healthz");
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["writes"], false);
}

TEST_F(ApiTest, ReposListsTheRepoAndItsBranch) {
  auto doc = get_valid(client(), "/api/v1/repos", 200, "repos");
  ASSERT_EQ(doc["repos"].size(), 1u);
  EXPECT_EQ(doc["repos"][0]["name"], "mla-kernels");
  ASSERT_EQ(doc["repos"][0]["branches"].size(), 1u);
  EXPECT_EQ(doc["repos"][0]["branches"][0]["head_sha"], info().shas.back());
}

TEST_F(ApiTest, CommitsArePagedNewestFirstWithStatusAndCost) {
  auto first = get_valid(client(), "/api/v1/commits?limit=5", 200, "commits");
  ASSERT_EQ(first["commits"].size(), 5u);
  EXPECT_TRUE(first["has_more"]);
  EXPECT_EQ(first["commits"][0]["sha"], info().shas.back());
  EXPECT_EQ(first["commits"][0]["status"]["latest_job_state"], "running");

  auto rest = get_valid(client(), "/api/v1/commits?limit=50&offset=5", 200, "commits");
  EXPECT_FALSE(rest["has_more"]);
  EXPECT_EQ(first["commits"].size() + rest["commits"].size(), info().shas.size());
  EXPECT_EQ(rest["commits"].back()["sha"], info().shas.front());

  // Every commit once; the hostile subject is data, verbatim; the docs
  // commit says whose results it carries and cost nothing.
  json all = first["commits"];
  for (auto& c : rest["commits"]) all.push_back(c);
  bool saw_hostile = false, saw_docs = false, saw_regression = false;
  for (const auto& c : all) {
    if (c["sha"] == info().hostile_sha) {
      saw_hostile = true;
      EXPECT_EQ(c["subject"], kHostileSubject);
      EXPECT_EQ(c["cost"]["runs"], 3);
      EXPECT_GT(c["cost"]["total_s"].get<double>(), 0);
    }
    if (c["sha"] == info().docs_sha) {
      saw_docs = true;
      EXPECT_EQ(c["inherited_from"], info().hostile_sha);
      EXPECT_EQ(c["cost"]["runs"], 0);
      EXPECT_EQ(c["cost"]["total_s"], 0.0);
    }
    if (c["sha"] == info().regression_sha) {
      saw_regression = true;
      EXPECT_EQ(c["status"]["open_regressions"], 18);  // 3 variants x 6 points
      EXPECT_EQ(c["status"]["runs_by_status"]["ok"], 3);
    }
  }
  EXPECT_TRUE(saw_hostile && saw_docs && saw_regression);
}

TEST_F(ApiTest, CommitsWithRunsAndOneCommit) {
  auto page = get_valid(client(), "/api/v1/commits?runs=true&limit=3", 200, "commits");
  ASSERT_EQ(page["commits"].size(), 3u);
  EXPECT_EQ(page["commits"][0]["runs"].size(), 1u);  // the running head's one run so far
  auto plain = get_valid(client(), "/api/v1/commits?limit=3", 200, "commits");
  EXPECT_FALSE(plain["commits"][0].contains("runs"));
  auto one = get_valid(client(), "/api/v1/commits?runs=true&commit=" + info().regression_sha.substr(0, 8), 200, "commits");
  ASSERT_EQ(one["commits"].size(), 1u);
  EXPECT_EQ(one["commits"][0]["sha"], info().regression_sha);
  EXPECT_EQ(one["commits"][0]["runs"].size(), 3u);
  EXPECT_FALSE(one["has_more"]);
  expect_error(client(), "/api/v1/commits?commit=0000000000", 404, "not_found", "commit");
}

TEST_F(ApiTest, CommitsRejectBadParameters) {
  expect_error(client(), "/api/v1/commits?limit=0", 400, "bad_parameter", "limit");
  expect_error(client(), "/api/v1/commits?limit=abc", 400, "bad_parameter", "limit");
  expect_error(client(), "/api/v1/commits?offset=-1", 400, "bad_parameter", "offset");
  expect_error(client(), "/api/v1/commits?limt=5", 400, "bad_parameter", "limt");
  expect_error(client(), "/api/v1/commits?limit=5&limit=6", 400, "bad_parameter", "limit");
  expect_error(client(), "/api/v1/commits?branch=nope", 404, "not_found", "branch");
  expect_error(client(), "/api/v1/commits?branch=a%20b", 400, "bad_parameter", "branch");
  expect_error(client(), "/api/v1/commits?repo=999", 404, "not_found", "repo");
}

TEST_F(ApiTest, CommitPageHasTheTableWithVerdicts) {
  auto doc = get_valid(client(), "/api/v1/commits/" + info().regression_sha.substr(0, 12), 200, "commit");
  EXPECT_EQ(doc["commit"]["sha"], info().regression_sha);
  EXPECT_EQ(doc["metric"], "time_us");
  EXPECT_TRUE(doc["lower_is_better"]);
  EXPECT_EQ(doc["runs"].size(), 3u);
  EXPECT_EQ(doc["builds"].size(), 1u);
  EXPECT_EQ(doc["table"]["variants"].size(), 3u);
  EXPECT_EQ(doc["table"]["variants"][0]["name"], info().baseline_variant);
  EXPECT_TRUE(doc["table"]["variants"][0]["is_baseline"]);
  EXPECT_EQ(doc["table"]["points"].size(), 6u);
  EXPECT_EQ(doc["table"]["points"][0]["label"], "C1");
  ASSERT_EQ(doc["table"]["cells"].size(), 18u);
  for (const auto& cell : doc["table"]["cells"]) {
    ASSERT_TRUE(cell["comparison"].is_object());
    EXPECT_EQ(cell["comparison"]["verdict"], "regression");
    EXPECT_GT(cell["comparison"]["delta_rel"].get<double>(), 0.05);
    EXPECT_EQ(cell["value"]["runs"], 3);
    EXPECT_GT(cell["value"]["geomean_of_run_medians"].get<double>(), 0);
  }
  EXPECT_EQ(doc["against"]["sha"], info().shas[3]);
  EXPECT_EQ(doc["flags"].size(), 18u);
  EXPECT_EQ(doc["annotations"].size(), 1u);
  EXPECT_EQ(doc["experiments"].size(), 2u);
}

TEST_F(ApiTest, InheritedCommitShowsItsSourcesValues) {
  auto doc = get_valid(client(), "/api/v1/commits/" + info().docs_sha, 200, "commit");
  EXPECT_EQ(doc["inherited_from"]["sha"], info().hostile_sha);
  EXPECT_EQ(doc["inherited_from"]["subject"], kHostileSubject);
  EXPECT_TRUE(doc["runs"].empty());
  EXPECT_EQ(doc["table"]["cells"].size(), 18u);
}

TEST_F(ApiTest, HostileCommitIsReturnedVerbatim) {
  auto doc = get_valid(client(), "/api/v1/commits/" + info().hostile_sha, 200, "commit");
  EXPECT_EQ(doc["commit"]["subject"], kHostileSubject);
  EXPECT_NE(doc["commit"]["message"].get<std::string>().find("<img src=x onerror=alert(2)>"), std::string::npos);
  EXPECT_EQ(doc["commit"]["author"], "Mallory <b>bold</b>");
}

TEST_F(ApiTest, UnknownCommitIs404AndMalformedIsNotARoute) {
  expect_error(client(), "/api/v1/commits/abcdef0123", 404, "not_found", "sha");
  expect_error(client(), "/api/v1/commits/xyz", 404, "not_found");
  expect_error(client(), "/api/v1/commits/" + info().shas[0] + "?basis=sideways", 400, "bad_parameter", "basis");
}

TEST_F(ApiTest, SeriesListsVariantsPointsAndTestbeds) {
  auto doc = get_valid(client(), "/api/v1/series", 200, "series");
  ASSERT_EQ(doc["variants"].size(), 3u);
  EXPECT_EQ(doc["variants"][0]["name"], info().baseline_variant);
  EXPECT_TRUE(doc["variants"][0]["is_baseline"]);
  ASSERT_EQ(doc["points"].size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(doc["points"][i]["key"], info().point_keys[i]);
  EXPECT_EQ(doc["testbeds"].size(), 1u);
}

TEST_F(ApiTest, HistoryHasEveryMeasuredCommitWithBandAndFlag) {
  auto doc = get_valid(client(), history_path(info().baseline_variant, info().point_keys[0]), 200, "history");
  // Every commit but the running head; the docs commit shows what it inherits.
  ASSERT_EQ(doc["entries"].size(), info().shas.size() - 1);
  EXPECT_EQ(doc["entries"][0]["sha"], info().shas[0]);
  EXPECT_EQ(doc["band"]["band_rel"], 0.03);
  EXPECT_TRUE(doc["band"]["calibrated"]);
  EXPECT_EQ(doc["band"]["source"], "aa");
  EXPECT_EQ(doc["point"]["label"], "C1");
  EXPECT_EQ(doc["point"]["axes"], json::parse(R"([{"name": "batch", "value": 1}])"));
  EXPECT_EQ(doc["unit"], "us");
  // The same point by its label: the same document.
  EXPECT_EQ(get_valid(client(), history_path(info().baseline_variant, "C1"), 200, "history"), doc);
  int flagged = 0;
  for (const auto& e : doc["entries"]) {
    EXPECT_TRUE(e["pooled"]);
    EXPECT_EQ(e["runs"].size(), 3u);
    EXPECT_LE(e["ci_low"].get<double>(), e["geomean_of_run_medians"].get<double>());
    EXPECT_GE(e["ci_high"].get<double>(), e["geomean_of_run_medians"].get<double>());
    if (e["sha"] == info().docs_sha) {
      EXPECT_TRUE(e["inherited"]);
    }
    if (!e["flag"].is_null()) {
      ++flagged;
      if (e["sha"] == info().regression_sha) {
        EXPECT_EQ(e["flag"]["kind"], "regression");
        EXPECT_EQ(e["flag"]["id"], info().regression_flag);
      }
    }
  }
  EXPECT_EQ(flagged, 2);  // the slowdown and its revert
  // The slowdown is in the numbers: ~12% between the 4th and 5th commits.
  EXPECT_EQ(doc["statistic"], "geomean_of_run_medians");
  double before = doc["entries"][3]["geomean_of_run_medians"], after = doc["entries"][4]["geomean_of_run_medians"];
  EXPECT_NEAR(after / before, 1.12, 0.04);
}

TEST_F(ApiTest, HistoryOfAnUncalibratedVariantUsesTheDefaultBand) {
  auto doc = get_valid(client(), history_path("bt32_w8_s3", info().point_keys[2], "&limit=3"), 200, "history");
  EXPECT_EQ(doc["band"]["source"], "default");
  EXPECT_FALSE(doc["band"]["calibrated"]);
  EXPECT_EQ(doc["band"]["band_rel"], 0.05);
  EXPECT_EQ(doc["entries"].size(), 2u);  // the 3 newest commits, the running head unmeasured
}

TEST_F(ApiTest, HistoryRejectsBadParameters) {
  expect_error(client(), "/api/v1/history?point=" + encoded(info().point_keys[0]), 400, "bad_parameter", "variant");
  expect_error(client(), "/api/v1/history?variant=" + info().baseline_variant, 400, "bad_parameter", "point");
  expect_error(client(), history_path(info().baseline_variant, "b7_nope"), 404, "not_found", "point");
  {
    // An unknown point is an error that lists the labels people can use.
    auto res = client().Get(history_path(info().baseline_variant, "C7").c_str());
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404);
    EXPECT_NE(res->body.find("C1, C8"), std::string::npos) << res->body;
  }
  expect_error(client(), history_path(info().baseline_variant, info().point_keys[0], "&limit=0"), 400, "bad_parameter", "limit");
  expect_error(client(), history_path(info().baseline_variant, info().point_keys[0], "&limit=99999"), 400, "bad_parameter", "limit");
  expect_error(client(), history_path(info().baseline_variant, info().point_keys[0], "&testbed=x"), 400, "bad_parameter", "testbed");
  expect_error(client(), history_path("<script>", info().point_keys[0]), 400, "bad_parameter", "variant");
}

TEST_F(ApiTest, RunTableHasEveryCellWithDeltas) {
  auto id = info().ok_runs.front();
  auto doc = get_valid(client(), "/api/v1/runs/" + std::to_string(id), 200, "run");
  EXPECT_EQ(doc["run"]["status"], "ok");
  EXPECT_EQ(doc["run"]["trial_count"], 90);
  EXPECT_EQ(doc["variants"].size(), 3u);
  EXPECT_EQ(doc["points"].size(), 6u);
  // What the run's manifest says, typed (schemas/store/manifest_facts.schema.json).
  EXPECT_EQ(doc["manifest"]["baseline"], info().baseline_variant);
  EXPECT_EQ(doc["manifest"]["cells"], 18);
  EXPECT_EQ(doc["manifest"]["metric"], "time_us");
  ASSERT_EQ(doc["manifest"]["metrics"].size(), 2u);
  EXPECT_EQ(doc["manifest"]["metrics"][1], json({{"name", "tokens_per_s"}, {"unit", "tokens/s"}, {"lower_is_better", false}}));
  ASSERT_EQ(doc["cells"].size(), 18u);
  for (const auto& c : doc["cells"]) {
    EXPECT_EQ(c["trials"], 5);
    EXPECT_GT(c["metrics"]["time_us"]["median"].get<double>(), 0);  // every summarised metric, by name
    EXPECT_EQ(c["summary"]["n"], 5);
    if (c["variant"] == info().baseline_variant) {
      EXPECT_TRUE(c["delta_vs_baseline"].is_null());
    }
    if (c["variant"] == "bt32_w8_s3") {
      EXPECT_GT(c["delta_vs_baseline"].get<double>(), 0.03);
    }
  }
}

TEST_F(ApiTest, RunErrors) {
  expect_error(client(), "/api/v1/runs/999999", 404, "not_found", "run");
  expect_error(client(), "/api/v1/runs/0", 400, "bad_parameter", "run");
  expect_error(client(), "/api/v1/runs/9999999999999999999", 400, "bad_parameter", "run");
  expect_error(client(), "/api/v1/runs/abc", 404, "not_found");
}

TEST_F(ApiTest, TwoRunsSideBySide) {
  auto a = info().ok_runs.front(), b = info().ok_runs.back();
  auto doc = get_valid(client(), "/api/v1/runs/" + std::to_string(a) + "/compare/" + std::to_string(b), 200, "run_compare");
  ASSERT_EQ(doc["rows"].size(), 18u);
  for (const auto& r : doc["rows"]) {
    ASSERT_TRUE(r["ratio"].is_number());
    EXPECT_NEAR(r["ratio"].get<double>(), r["b"]["median"].get<double>() / r["a"]["median"].get<double>(), 1e-9);
  }
  expect_error(client(), "/api/v1/runs/" + std::to_string(a) + "/compare/999999", 404, "not_found", "against");
}

TEST_F(ApiTest, AbTableLaysVariantsAcrossTheSweep) {
  auto doc = get_valid(client(), "/api/v1/ab", 200, "ab");
  // The head is still running: the newest commit with results is shown.
  EXPECT_EQ(doc["commit"]["sha"], info().shas[info().shas.size() - 2]);
  EXPECT_EQ(doc["baseline"]["name"], info().baseline_variant);
  ASSERT_EQ(doc["candidates"].size(), 2u);
  ASSERT_EQ(doc["rows"].size(), 6u);
  EXPECT_EQ(doc["rows"][0]["point"]["label"], "C1");
  EXPECT_EQ(doc["rows"][5]["point"]["label"], "C96");
  for (const auto& c : doc["candidates"]) {
    ASSERT_TRUE(c["experiment"].is_object()) << c["name"];
    if (c["name"] == "bt32_w8_s3") {
      EXPECT_EQ(c["experiment"]["verdict"], "rejected");
    }
  }
  for (const auto& row : doc["rows"]) {
    for (const auto& cell : row["cells"]) {
      EXPECT_EQ(cell["from"], "experiment");
      if (cell["candidate"] == "bt32_w8_s3") {
        EXPECT_EQ(cell["verdict"], "regression");
      }
    }
  }
  auto one = get_valid(client(), "/api/v1/ab?commit=" + info().shas[0] + "&candidate=bt64_w4_s2", 200, "ab");
  ASSERT_EQ(one["candidates"].size(), 1u);
  expect_error(client(), "/api/v1/ab?candidate=nope", 404, "not_found", "candidate");
  expect_error(client(), "/api/v1/ab?commit=zz", 400, "bad_parameter", "commit");
}

TEST_F(ApiTest, FlagsFilterByStateKindAndPoint) {
  auto open = get_valid(client(), "/api/v1/flags?limit=500", 200, "flags");
  auto acked = get_valid(client(), "/api/v1/flags?state=acknowledged", 200, "flags");
  auto any = get_valid(client(), "/api/v1/flags?state=any&limit=500", 200, "flags");
  // The withdrawn list is a document of the same schema (none is withdrawn here).
  auto withdrawn = get_valid(client(), "/api/v1/flags?state=withdrawn", 200, "flags");
  EXPECT_EQ(withdrawn["state"], "withdrawn");
  EXPECT_EQ(acked["flags"].size(), 1u);
  EXPECT_EQ(acked["flags"][0]["id"], info().acknowledged_flag);
  EXPECT_EQ(open["flags"].size() + 1, any["flags"].size());
  EXPECT_EQ(any["flags"].size(), 36u);  // 18 at the slowdown, 18 at its revert

  auto regressions = get_valid(client(), "/api/v1/flags?kind=regression&point=" + encoded(info().point_keys[0]), 200, "flags");
  ASSERT_EQ(regressions["flags"].size(), 3u);
  for (const auto& f : regressions["flags"]) {
    EXPECT_EQ(f["kind"], "regression");
    EXPECT_EQ(f["sha"], info().regression_sha);
    EXPECT_EQ(f["point_key"], info().point_keys[0]);
    EXPECT_EQ(f["point_label"], "C1");
  }
  auto page = get_valid(client(), "/api/v1/flags?limit=10", 200, "flags");
  EXPECT_EQ(page["flags"].size(), 10u);
  EXPECT_TRUE(page["has_more"]);
  auto of_commit = get_valid(client(), "/api/v1/flags?state=any&commit=" + info().revert_sha.substr(0, 8), 200, "flags");
  EXPECT_EQ(of_commit["flags"].size(), 18u);

  expect_error(client(), "/api/v1/flags?state=closed", 400, "bad_parameter", "state");
  expect_error(client(), "/api/v1/flags?point=b3_h1", 404, "not_found", "point");
  // A label names the point too.
  auto by_label = get_valid(client(), "/api/v1/flags?kind=regression&point=C1", 200, "flags");
  EXPECT_EQ(by_label["flags"], regressions["flags"]);
}

TEST_F(ApiTest, OneFlagWithItsComparison) {
  auto doc = get_valid(client(), "/api/v1/flags/" + std::to_string(info().regression_flag), 200, "flag");
  EXPECT_EQ(doc["kind"], "regression");
  EXPECT_EQ(doc["point"]["label"], "C1");
  ASSERT_TRUE(doc["comparison"].is_object());
  EXPECT_EQ(doc["comparison"]["verdict"], "regression");
  EXPECT_EQ(doc["comparison"]["against"]["sha"], info().shas[3]);
  expect_error(client(), "/api/v1/flags/987654", 404, "not_found", "flag");
}

TEST_F(ApiTest, ExperimentsSearchByVerdictTextAndParameter) {
  auto rejected = get_valid(client(), "/api/v1/experiments?verdict=rejected&limit=100", 200, "experiments");
  ASSERT_FALSE(rejected["experiments"].empty());
  bool saw_manual = false;
  for (const auto& e : rejected["experiments"]) {
    EXPECT_EQ(e["verdict"], "rejected");
    EXPECT_FALSE(e["evidence"].empty());
    if (e["id"] == info().manual_experiment) saw_manual = true;
  }
  EXPECT_TRUE(saw_manual);

  auto text = get_valid(client(), "/api/v1/experiments?q=C64%20rejected", 200, "experiments");
  ASSERT_EQ(text["experiments"].size(), 1u);
  EXPECT_EQ(text["experiments"][0]["id"], info().manual_experiment);
  EXPECT_NE(text["experiments"][0]["conclusion"].get<std::string>().find("REJECTED"), std::string::npos);
  ASSERT_EQ(text["experiments"][0]["evidence"].size(), 6u);

  auto warps = get_valid(client(), "/api/v1/experiments?param=num_warps%3D8&limit=100", 200, "experiments");
  ASSERT_FALSE(warps["experiments"].empty());
  for (const auto& e : warps["experiments"]) EXPECT_EQ(e["candidates"][0]["params"]["num_warps"], 8);

  auto hostile = get_valid(client(), "/api/v1/experiments?source=trailer", 200, "experiments");
  ASSERT_EQ(hostile["experiments"].size(), 1u);
  EXPECT_EQ(hostile["experiments"][0]["hypothesis"], "<img src=x onerror=alert(3)>");
  EXPECT_EQ(hostile["experiments"][0]["refs"][0]["commit_sha"], info().hostile_sha);

  auto bare = get_valid(client(), "/api/v1/experiments?evidence=false&limit=2", 200, "experiments");
  EXPECT_FALSE(bare["experiments"][0].contains("evidence"));
  EXPECT_TRUE(bare["has_more"]);

  auto none = get_valid(client(), "/api/v1/experiments?q=%22%27%28%29*%5E", 200, "experiments");
  EXPECT_TRUE(none["experiments"].empty());

  expect_error(client(), "/api/v1/experiments?verdict=great", 400, "bad_parameter", "verdict");
  expect_error(client(), "/api/v1/experiments?param=num_warps", 400, "bad_parameter", "param");
  expect_error(client(), "/api/v1/experiments?q=" + std::string(201, 'a'), 400, "bad_parameter", "q");
  expect_error(client(), "/api/v1/experiments?q=a%0Ab", 400, "bad_parameter", "q");
}

TEST_F(ApiTest, OneExperimentWithEvidence) {
  auto doc = get_valid(client(), "/api/v1/experiments/" + std::to_string(info().rejected_experiment), 200, "experiment");
  EXPECT_EQ(doc["verdict"], "rejected");
  EXPECT_EQ(doc["evidence"].size(), 6u);
  expect_error(client(), "/api/v1/experiments/999999", 404, "not_found", "experiment");
}

TEST_F(ApiTest, JobsShowTheRunningJobsProgress) {
  auto doc = get_valid(client(), "/api/v1/jobs", 200, "jobs");
  EXPECT_EQ(doc["counts"]["running"], 1);
  EXPECT_EQ(doc["counts"]["queued"], 0);
  const json* running = nullptr;
  for (const auto& j : doc["jobs"])
    if (j["state"] == "running") running = &j;
  ASSERT_NE(running, nullptr);
  EXPECT_EQ((*running)["commit_sha"], info().running_sha);
  const auto& progress = (*running)["progress"];
  ASSERT_EQ(progress["runs"].size(), 1u);
  EXPECT_EQ(progress["runs"][0]["trials"], 5);
  EXPECT_EQ(progress["runs"][0]["cells_done"], 1);
  EXPECT_EQ(progress["runs"][0]["cells_planned"], 18);  // 3 variants x 6 points, from the run's manifest facts
  // The daemon's typed report (schemas/store/job_progress.schema.json).
  const auto& report = progress["report"];
  EXPECT_EQ(report["step"], "run");
  EXPECT_EQ(report["commit"], info().running_sha);
  EXPECT_EQ(report["run"], 1);
  EXPECT_EQ(report["runs_planned"], 3);
  EXPECT_EQ(report["point"], info().point_keys[0]);
  EXPECT_EQ(report["point_index"], 1);
  EXPECT_EQ(report["points"], 6);
  EXPECT_EQ(report["run_kind"], "bench");
  auto running_only = get_valid(client(), "/api/v1/jobs?state=running", 200, "jobs");
  EXPECT_EQ(running_only["jobs"].size(), 1u);
  // A commit given up on: its job's state, attempts and why.
  EXPECT_EQ(doc["counts"]["gave_up"], 1);
  auto given_up = get_valid(client(), "/api/v1/jobs?state=gave_up", 200, "jobs");
  ASSERT_EQ(given_up["jobs"].size(), 1u);
  EXPECT_EQ(given_up["jobs"][0]["id"], info().given_up_job);
  EXPECT_EQ(given_up["jobs"][0]["commit_sha"], info().hostile_sha);
  EXPECT_EQ(given_up["jobs"][0]["attempts"], 3);
  EXPECT_TRUE(given_up["jobs"][0]["progress"].is_null());
  expect_error(client(), "/api/v1/jobs?state=sleeping", 400, "bad_parameter", "state");
}

TEST_F(ApiTest, MetricsInPrometheusTextFormat) {
  auto r = client().Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = r->body;
  EXPECT_NE(text.find("# TYPE perfwatch_jobs gauge"), std::string::npos);
  EXPECT_NE(text.find("perfwatch_jobs{state=\"running\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfwatch_jobs{state=\"queued\"} 0\n"), std::string::npos);
  // 10 measured commits x 3 runs are ok; the head's run is running.
  EXPECT_NE(text.find("perfwatch_runs{status=\"ok\"} 30\n"), std::string::npos);
  EXPECT_NE(text.find("perfwatch_runs{status=\"running\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("perfwatch_last_run_age_seconds "), std::string::npos);
  EXPECT_NE(text.find("perfwatch_open_regressions 18\n"), std::string::npos);
  // Every sample line is "name{labels} number" or "name number".
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "the text ends with a newline";
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("# ", 0) == 0) continue;
    auto space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    EXPECT_NO_THROW((void)std::stod(line.substr(space + 1))) << line;
    EXPECT_EQ(line.rfind("perfwatch_", 0), 0u) << line;
  }
}

}  // namespace
}  // namespace perfwatch::web::testing
