// Safe by default: writes need the bearer token, nothing outside the
// embedded assets can be read, requests are bounded in size and rate, every
// response carries the security headers, and a 500 says nothing internal.
#include <sqlite3.h>

#include "web_test_support.h"

namespace perfwatch::web::testing {
namespace {

using nlohmann::json;

constexpr const char* kToken = "s3cret-token-for-tests";

class SecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { db_ = new FixtureDb(); }
  static void TearDownTestSuite() {
    delete db_;
    db_ = nullptr;
  }
  static FixtureDb* db_;
};
FixtureDb* SecurityTest::db_ = nullptr;

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

std::string ack_path(store::FlagId id) { return "/api/v1/flags/" + std::to_string(id) + "/acknowledge"; }

TEST_F(SecurityTest, DefaultsAreLoopbackAndNoWrites) {
  ServerOptions defaults;
  EXPECT_EQ(defaults.bind, "127.0.0.1");
  EXPECT_TRUE(defaults.token.empty());
}

TEST_F(SecurityTest, ReadOnlyServerRefusesWritesWith403) {
  Running s(read_only_options(db_->path));
  auto r = s.client->Post(ack_path(db_->info.regression_flag).c_str(), bearer(kToken), R"({"reason":"x"})",
                          "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  auto doc = body_json(r);
  EXPECT_TRUE(matches_schema(doc, "error"));
  EXPECT_EQ(doc["error"]["code"], "writes_disabled");
}

TEST_F(SecurityTest, ServerWithoutTokenRefusesWritesWith403) {
  ServerOptions o;
  o.db = db_->path;
  Running s(o);  // read_only false, but no token
  auto r = s.client->Post(ack_path(db_->info.regression_flag).c_str(), R"({"reason":"x"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
}

TEST_F(SecurityTest, AcknowledgeNeedsTheRightBearerToken) {
  // Writes change the database: a fixture of this test's own.
  FixtureDb db;
  ServerOptions o;
  o.db = db.path;
  o.token = kToken;
  Running s(o);
  const std::string path = ack_path(db.info.regression_flag);
  const std::string body = R"({"reason":"expected: the gather rework trades C1 for C96","by":"tester"})";

  auto missing = s.client->Post(path.c_str(), body, "application/json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(missing->get_header_value("WWW-Authenticate").rfind("Bearer", 0), 0u);
  EXPECT_TRUE(matches_schema(body_json(missing), "error"));

  for (const std::string& wrong : {std::string("nope"), std::string(kToken) + "x", std::string(kToken).substr(1), std::string("s3cret-token-for-test")}) {
    auto r = s.client->Post(path.c_str(), bearer(wrong), body, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << wrong;
    EXPECT_EQ(body_json(r)["error"]["code"], "unauthorized");
  }
  auto basic = s.client->Post(path.c_str(), httplib::Headers{{"Authorization", std::string("Basic ") + kToken}}, body,
                              "application/json");
  ASSERT_TRUE(basic);
  EXPECT_EQ(basic->status, 401);

  // Still open: nothing was written by the refused requests.
  auto before = body_json(s.client->Get(("/api/v1/flags/" + std::to_string(db.info.regression_flag)).c_str()));
  EXPECT_TRUE(before["acknowledged"].is_null());

  auto ok = s.client->Post(path.c_str(), bearer(kToken), body, "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  auto doc = body_json(ok);
  EXPECT_TRUE(matches_schema(doc, "flag"));
  EXPECT_EQ(doc["acknowledged"]["reason"], "expected: the gather rework trades C1 for C96");
  EXPECT_EQ(doc["acknowledged"]["by"], "tester");
  auto after = body_json(s.client->Get(("/api/v1/flags/" + std::to_string(db.info.regression_flag)).c_str()));
  EXPECT_EQ(after["acknowledged"]["by"], "tester");
}

TEST_F(SecurityTest, AcknowledgeValidatesItsBody) {
  FixtureDb db;
  ServerOptions o;
  o.db = db.path;
  o.token = kToken;
  Running s(o);
  const std::string path = ack_path(db.info.regression_flag);
  struct Case {
    std::string body, field;
  };
  for (const auto& c : {Case{"not json", "body"}, Case{R"({"by":"x"})", "body"}, Case{R"({"reason":""})", "body.reason"},
                        Case{R"({"reason":"r","extra":1})", "body"}, Case{R"({"reason":42})", "body.reason"}}) {
    auto r = s.client->Post(path.c_str(), bearer(kToken), c.body, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << c.body;
    auto doc = body_json(r);
    EXPECT_TRUE(matches_schema(doc, "error"));
    EXPECT_EQ(doc["error"]["field"], c.field) << c.body << ": " << doc.dump();
  }
  auto unknown = s.client->Post(ack_path(987654).c_str(), bearer(kToken), R"({"reason":"r"})", "application/json");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(body_json(unknown)["error"]["field"], "flag");
}

TEST_F(SecurityTest, NoPathOutsideTheAssetsCanBeRead) {
  Running s(read_only_options(db_->path));
  for (const std::string& target : std::vector<std::string>{
           "/../../etc/passwd", "/assets/../../etc/passwd", "/assets/%2e%2e/%2e%2e/etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd", "/assets/..%2f..%2f..%2fetc%2fpasswd", "/assets/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/assets//etc/passwd", "/assets/....//....//etc/passwd", "/etc/passwd", "/assets/%252e%252e/etc/passwd",
        "/assets/..\\..\\etc\\passwd", "/assets/app.js/../../../etc/passwd", "/assets/vendor/../../../../etc/passwd",
        "/" + db_->path.string(), "/assets/" + db_->path.string(), "/assets/../CMakeLists.txt",
        "/assets/../server.cpp", "/web/server.cpp", "/.git/config"}) {
    std::string response = raw_get(s.port(), target);
    EXPECT_EQ(raw_status(response), 404) << target << "\n" << response.substr(0, 300);
    EXPECT_EQ(response.find("root:"), std::string::npos) << target;
    EXPECT_EQ(response.find("SQLite format"), std::string::npos) << target;
    EXPECT_EQ(response.find("add_library"), std::string::npos) << target;
    EXPECT_NE(response.find("\"not_found\""), std::string::npos) << target;
  }
}

TEST_F(SecurityTest, TheEmbeddedAssetsAreServed) {
  Running s(read_only_options(db_->path));
  auto index = s.client->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("/assets/app.js"), std::string::npos);
  // No inline script: every <script> has a src.
  for (std::size_t at = index->body.find("<script"); at != std::string::npos; at = index->body.find("<script", at + 1))
    EXPECT_NE(index->body.substr(at, index->body.find('>', at) - at).find("src="), std::string::npos);

  for (const char* path : {"/assets/app.js", "/assets/style.css", "/assets/vendor/uPlot.iife.min.js",
                           "/assets/vendor/uPlot.min.css"}) {
    auto r = s.client->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_FALSE(r->body.empty()) << path;
    auto etag = r->get_header_value("ETag");
    ASSERT_FALSE(etag.empty()) << path;
    auto again = s.client->Get(path, httplib::Headers{{"If-None-Match", etag}});
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 304) << path;
  }
  auto js = s.client->Get("/assets/app.js");
  EXPECT_EQ(js->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
}

TEST_F(SecurityTest, EveryResponseCarriesTheSecurityHeaders) {
  Running s(read_only_options(db_->path));
  for (const char* path : {"/", "/assets/app.js", "/api/v1/repos", "/api/v1/nothing", "/healthz", "/metrics",
                           "/api/v1/commits?limit=0"}) {
    auto r = s.client->Get(path);
    ASSERT_TRUE(r) << path;
    std::string csp = r->get_header_value("Content-Security-Policy");
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << path;
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << path;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << path;
    EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos) << path;
    EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(r->get_header_value("X-Frame-Options"), "DENY") << path;
    EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin")) << path;
  }
}

TEST_F(SecurityTest, UnknownRoutesAndMethodsGetJsonErrors) {
  Running s(read_only_options(db_->path));
  expect_error(*s.client, "/api/v1/nothing", 404, "not_found");
  expect_error(*s.client, "/api/v2/commits", 404, "not_found");
  auto del = s.client->Delete("/api/v1/flags/1");
  ASSERT_TRUE(del);
  EXPECT_GE(del->status, 400);
  EXPECT_LT(del->status, 500);
  EXPECT_TRUE(matches_schema(body_json(del), "error"));
}

TEST_F(SecurityTest, RequestSizeIsBounded) {
  ServerOptions o = read_only_options(db_->path);
  o.limits.max_body_bytes = 1024;
  o.limits.read_timeout_s = 1;  // the announced-but-never-sent body below ends by timeout
  Running s(o);
  std::string big(4096, 'x');
  auto r = s.client->Post(ack_path(db_->info.regression_flag).c_str(), bearer(kToken), big, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  auto doc = body_json(r);
  EXPECT_TRUE(matches_schema(doc, "error"));
  EXPECT_EQ(doc["error"]["code"], "payload_too_large");

  // A body announced larger than the limit is refused before it is read.
  std::string announced = raw_exchange(s.port(),
                                       "POST " + ack_path(db_->info.regression_flag) +
                                           " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                                           "Content-Length: 1000000000\r\n\r\n{}");
  EXPECT_EQ(raw_status(announced), 413) << announced.substr(0, 200);

  std::string long_uri = raw_get(s.port(), "/api/v1/commits?x=" + std::string(10000, 'a'));
  EXPECT_EQ(raw_status(long_uri), 414) << long_uri.substr(0, 200);
}

TEST_F(SecurityTest, ExpensiveRequestsAreRateLimited) {
  ServerOptions o = read_only_options(db_->path);
  o.limits.expensive_burst = 3;
  o.limits.expensive_per_s = 0.001;  // one token per ~17 minutes: none comes back during the test
  Running s(o);
  for (int i = 0; i < 3; ++i) {
    auto r = s.client->Get("/api/v1/commits?limit=2");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << i;
  }
  auto limited = s.client->Get("/api/v1/history?variant=bt32_w4_s2&point=batch=1");
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->status, 429);
  EXPECT_FALSE(limited->get_header_value("Retry-After").empty());
  auto doc = body_json(limited);
  EXPECT_TRUE(matches_schema(doc, "error"));
  EXPECT_EQ(doc["error"]["code"], "rate_limited");
  // Cheap requests are not limited.
  for (int i = 0; i < 10; ++i) {
    auto r = s.client->Get("/healthz");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  auto metrics = s.client->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("perfwatch_http_rate_limited_total 1\n"), std::string::npos) << metrics->body;
}

TEST_F(SecurityTest, InternalErrorsSayNothingInternal) {
  // A run whose stored status the store does not know: reading it fails
  // inside the store with the database's path and the column in the error.
  FixtureDb db;
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db.path.c_str(), &raw), SQLITE_OK);
    char* message = nullptr;
    std::string sql = "PRAGMA ignore_check_constraints = ON; UPDATE runs SET status = 'exploded' WHERE id = " +
                      std::to_string(db.info.ok_runs.front()) + ";";
    int rc = sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &message);
    EXPECT_EQ(rc, SQLITE_OK) << (message ? message : "");
    sqlite3_free(message);
    sqlite3_close(raw);
  }
  Running s(read_only_options(db.path));
  auto r = s.client->Get(("/api/v1/runs/" + std::to_string(db.info.ok_runs.front())).c_str());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  auto doc = body_json(r);
  EXPECT_TRUE(matches_schema(doc, "error"));
  EXPECT_EQ(doc["error"]["code"], "internal");
  EXPECT_EQ(r->body.find(db.path.string()), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("exploded"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("column"), std::string::npos) << r->body;
}

TEST_F(SecurityTest, StartRefusesAMissingDatabaseAndBadOptions) {
  ServerOptions o;
  o.db = db_->dir / "missing.db";
  o.port = 0;
  auto missing = Server::start(o);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  o.db = db_->path;
  o.port = 70000;
  auto bad_port = Server::start(o);
  ASSERT_FALSE(bad_port);
  EXPECT_EQ(bad_port.error().code, ErrorCode::kInvalidArgument);
  o.port = 0;
  o.bind = "256.1.1.1";
  auto bad_bind = Server::start(o);
  ASSERT_FALSE(bad_bind);
  EXPECT_EQ(bad_bind.error().code, ErrorCode::kIo);
}

TEST_F(SecurityTest, StopIsIdempotentAndFreesThePort) {
  ServerOptions o = read_only_options(db_->path);
  o.port = 0;
  auto started = Server::start(o);
  ASSERT_TRUE(started) << started.error().to_string();
  int port = (*started)->port();
  (*started)->stop();
  (*started)->stop();
  EXPECT_EQ(raw_get(port, "/healthz"), "");  // nothing listens any more
  o.port = port;
  auto again = Server::start(o);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ((*again)->port(), port);
}

}  // namespace
}  // namespace perfwatch::web::testing
