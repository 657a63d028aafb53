// Alert groups over HTTP (listed, triaged with the token), /metrics' cell
// values and per-route latency histograms, and the band that judged each
// history point -- against the fixture database.
#include <gtest/gtest.h>

#include <regex>

#include "web/route_latency.h"
#include "web_test_support.h"

namespace perfwatch::web::testing {
namespace {

using nlohmann::json;

constexpr const char* kToken = "triage-token-for-tests";
httplib::Headers bearer() { return {{"Authorization", std::string("Bearer ") + kToken}}; }

ServerOptions writable(const std::filesystem::path& db) {
  ServerOptions o;
  o.db = db;
  o.token = kToken;
  return o;
}

TEST(AlertGroupsApi, TheSlowCommitIsOneGroupTriagedAsOneWithTheToken) {
  FixtureDb db;
  Running s(writable(db.path));
  const json open = get_valid(*s.client, "/api/v1/alert-groups", 200, "alert_groups");
  ASSERT_GE(open["groups"].size(), 2u);  // the slowdown and its revert
  const json* slow = nullptr;
  for (const auto& g : open["groups"])
    if (g["sha"] == db.info.regression_sha) slow = &g;
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ((*slow)["cells"], 18);
  EXPECT_EQ((*slow)["state"], "open");
  EXPECT_TRUE((*slow)["worst"]["regression"].get<bool>());
  EXPECT_GT((*slow)["worst"]["magnitude_rel"].get<double>(), 0.05);

  const std::string path = "/api/v1/alert-groups/" + db.info.regression_sha.substr(0, 12) + "/triage";
  const std::string body = R"({"triage": "expected", "reason": "the gather rework trades C1 for C96", "by": "tester"})";
  auto refused = s.client->Post(path.c_str(), body, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  auto bad = s.client->Post(path.c_str(), bearer(), R"({"triage": "wontfix", "reason": "x"})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_TRUE(matches_schema(body_json(bad), "error"));
  auto none = s.client->Post(("/api/v1/alert-groups/" + db.info.docs_sha + "/triage").c_str(), bearer(),
                             R"({"triage": "ack", "reason": "x"})", "application/json");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404) << none->body;
  EXPECT_EQ(body_json(none)["error"]["field"], "commit");

  auto ok = s.client->Post(path.c_str(), bearer(), body, "application/json");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, 200) << ok->body;
  const json triaged = body_json(ok);
  EXPECT_TRUE(matches_schema(triaged, "alert_groups"));
  ASSERT_EQ(triaged["groups"].size(), 1u);
  EXPECT_EQ(triaged["groups"][0]["state"], "expected");
  EXPECT_EQ(triaged["groups"][0]["open"], 0);
  EXPECT_EQ(triaged["groups"][0]["triage"]["by"], "tester");
  const json after = get_valid(*s.client, "/api/v1/alert-groups", 200, "alert_groups");
  EXPECT_EQ(after["groups"].size(), open["groups"].size() - 1);
  const json flags = get_valid(*s.client, "/api/v1/flags?commit=" + db.info.regression_sha, 200, "flags");
  EXPECT_TRUE(flags["flags"].empty()) << "no flag of the group is open";
  const json closed = get_valid(*s.client, "/api/v1/alert-groups?state=closed", 200, "alert_groups");
  EXPECT_EQ(closed["groups"][0]["sha"], db.info.regression_sha);
}

TEST(AlertGroupsApi, AReadOnlyServerRefusesTriage) {
  FixtureDb db;
  Running s(read_only_options(db.path));
  auto r = s.client->Post(("/api/v1/alert-groups/" + db.info.regression_sha + "/triage").c_str(), bearer(),
                          R"({"triage": "ack", "reason": "x"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
}

TEST(Metrics, EveryCellsNewestValueAndBandAndALatencyHistogramPerRoute) {
  FixtureDb db;
  Running s(read_only_options(db.path));
  get_valid(*s.client, "/api/v1/alert-groups", 200, "alert_groups");
  auto r = s.client->Get("/metrics");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const std::string& m = r->body;
  // 3 variants x 6 points on the fixture's one testbed.
  const std::regex value(R"(\nperfwatch_point_value\{repo="[^"]*",testbed="[^"]*",variant="bt32_w4_s2",point="C48",metric="[a-z_]+"\} [0-9.e+-]+\n)");
  EXPECT_TRUE(std::regex_search(m, value)) << m.substr(0, 3000);
  std::size_t cells = 0;
  for (std::size_t at = m.find("\nperfwatch_point_value{"); at != std::string::npos;
       at = m.find("\nperfwatch_point_value{", at + 1))
    ++cells;
  EXPECT_EQ(cells, 18u);
  EXPECT_NE(m.find("\nperfwatch_point_band_rel{"), std::string::npos);
  EXPECT_NE(m.find("\nperfwatch_point_series_truncated 0\n"), std::string::npos);
  // The histogram of the route just asked: cumulative buckets, +Inf = count.
  std::smatch inf, count;
  ASSERT_TRUE(std::regex_search(m, inf, std::regex(R"(perfwatch_http_request_duration_seconds_bucket\{route="/api/v1/alert-groups",le="\+Inf"\} (\d+))")));
  ASSERT_TRUE(std::regex_search(m, count, std::regex(R"(perfwatch_http_request_duration_seconds_count\{route="/api/v1/alert-groups"\} (\d+))")));
  EXPECT_EQ(inf[1], "1");
  EXPECT_EQ(count[1], "1");
  EXPECT_NE(m.find("# TYPE perfwatch_http_request_duration_seconds histogram\n"), std::string::npos);
  // A path no route has adds no series.
  s.client->Get("/api/v1/no-such-route-xyz");
  EXPECT_EQ(s.client->Get("/metrics")->body.find("no-such-route"), std::string::npos);
}

TEST(Metrics, LabelValuesAreEscapedAsTheFormatSays) {
  EXPECT_EQ(prometheus_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  RouteLatency latency;
  const auto id = latency.add("/x");
  latency.observe(id, 0.003);
  latency.observe(id, 20);
  std::string out;
  latency.write(out);
  EXPECT_NE(out.find("_bucket{route=\"/x\",le=\"0.0025\"} 0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("_bucket{route=\"/x\",le=\"0.005\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("_bucket{route=\"/x\",le=\"10\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("_bucket{route=\"/x\",le=\"+Inf\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("_count{route=\"/x\"} 2\n"), std::string::npos) << out;
}

TEST(BandThatJudged, HistoryPointsAndComparisonsSayTheirBandAndTest) {
  FixtureDb db;
  Running s(read_only_options(db.path));
  const json h = get_valid(*s.client, "/api/v1/history?variant=bt32_w4_s2&point=C48", 200, "history");
  int judged = 0;
  for (const auto& e : h["entries"]) {
    if (e["judged"].is_null()) continue;
    ++judged;
    EXPECT_TRUE(e["judged"]["judged_by"]["band_rel"].is_number());
    EXPECT_EQ(e["judged"]["judged_by"]["alpha"], 0.001);
  }
  EXPECT_GE(judged, 5) << "every measured commit after the first was compared";
  const json c = get_valid(*s.client, "/api/v1/commits/" + db.info.regression_sha, 200, "commit");
  EXPECT_NE(c.dump().find("\"judged_by\""), std::string::npos);
}

}  // namespace
}  // namespace perfwatch::web::testing
