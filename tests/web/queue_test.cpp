// The queue and the webhook outbox through the API: a commit given up on is
// shown (its job's state, attempts and why; on its commit page) and
// re-queued with the bearer token; the outbox lists every message without
// the secret a webhook URL carries. Each test has a small database of its
// own, made with the store's code.
#include "store/outbox_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "web_test_support.h"

namespace perfwatch::web::testing {
namespace {

using nlohmann::json;

constexpr const char* kToken = "s3cret-token-for-tests";
const std::string kSha = "3f2a9c1e05" + std::string(30, 'b');
const std::string kOtherSha = "77aa9c1e05" + std::string(30, 'c');

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

// A repo with two commits: kSha given up on (cut off three times), kOtherSha done.
struct QueueDb {
  perfwatch::testing::TempDir dir{"perfwatch-web-queue"};
  std::filesystem::path path = dir / "queue.db";
  store::JobId given_up = 0;

  QueueDb() {
    auto db = store::Database::open(path);
    if (!db) throw std::runtime_error(db.error().to_string());
    auto repo = store::RepoWriter(*db).ensure_repo({.path = "/src/kernels", .url = "", .name = "kernels"});
    if (!repo) throw std::runtime_error(repo.error().to_string());
    for (const auto& sha : {kSha, kOtherSha}) {
      store::CommitRecord c;
      c.repo_id = *repo;
      c.sha = sha;
      c.subject = "<img src=x onerror=alert(1)> tiles";
      if (!store::RepoWriter(*db).put_commit(c)) throw std::runtime_error("put_commit");
    }
    store::JobQueue q(*db);
    if (!q.enqueue({.repo_id = *repo, .commit_sha = kSha, .branch = "main"})) throw std::runtime_error("enqueue");
    for (int crash = 0; crash < 3; ++crash) {
      auto claimed = q.claim_next();
      if (!claimed || !*claimed) throw std::runtime_error("claim");
      auto r = q.recover_after_crash(3);
      if (!r) throw std::runtime_error(r.error().to_string());
      if (!r->gave_up.empty()) given_up = r->gave_up[0].id;
    }
    if (!q.enqueue({.repo_id = *repo, .commit_sha = kOtherSha, .branch = "main"})) throw std::runtime_error("enqueue");
    auto other = q.claim_next();
    if (!other || !*other || !q.finish((*other)->id, store::JobState::kDone, "3 ok run(s)"))
      throw std::runtime_error("finish");
  }
  ServerOptions writable() const {
    ServerOptions o;
    o.db = path;
    o.token = kToken;
    return o;
  }
};

std::string requeue_path(const std::string& sha) { return "/api/v1/commits/" + sha + "/requeue"; }

TEST(QueueApi, ACommitGivenUpOnIsShownWithItsAttemptsAndWhy) {
  QueueDb db;
  Running s(read_only_options(db.path));
  auto doc = get_valid(*s.client, "/api/v1/jobs?state=gave_up", 200, "jobs");
  EXPECT_EQ(doc["counts"]["gave_up"], 1);
  ASSERT_EQ(doc["jobs"].size(), 1u);
  const json& j = doc["jobs"][0];
  EXPECT_EQ(j["id"], db.given_up);
  EXPECT_EQ(j["commit_sha"], kSha);
  EXPECT_EQ(j["state"], "gave_up");
  EXPECT_EQ(j["attempts"], 3);
  EXPECT_EQ(j["stops"], 0);
  EXPECT_NE(j["message"].get<std::string>().find("gave up after 3 attempt(s), each cut off"), std::string::npos);
  // On the commit's page too.
  auto commit = get_valid(*s.client, "/api/v1/commits/" + kSha.substr(0, 10), 200, "commit");
  ASSERT_FALSE(commit["jobs"].empty());
  EXPECT_EQ(commit["jobs"][0]["state"], "gave_up");
  expect_error(*s.client, "/api/v1/jobs?state=given_up", 400, "bad_parameter", "state");
}

TEST(QueueApi, RequeueNeedsTheTokenAndAWritableServer) {
  QueueDb db;
  {
    Running ro(read_only_options(db.path));
    auto r = ro.client->Post(requeue_path(kSha).c_str(), bearer(kToken), "{}", "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403);
    EXPECT_EQ(body_json(r)["error"]["code"], "writes_disabled");
  }
  Running s(db.writable());
  auto missing = s.client->Post(requeue_path(kSha).c_str(), "{}", "application/json");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  auto wrong = s.client->Post(requeue_path(kSha).c_str(), bearer("nope"), "{}", "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  // Nothing was written by the refused requests.
  EXPECT_EQ(body_json(s.client->Get("/api/v1/jobs?state=gave_up"))["jobs"].size(), 1u);
}

TEST(QueueApi, AGivenUpCommitIsRequeuedOnceWithTheToken) {
  QueueDb db;
  Running s(db.writable());
  auto ok = s.client->Post(requeue_path(kSha.substr(0, 10)).c_str(), bearer(kToken), R"({"by":"tester"})",
                           "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  auto doc = body_json(ok);
  EXPECT_TRUE(matches_schema(doc, "requeue"));
  EXPECT_EQ(doc["given_up"]["id"], db.given_up);
  EXPECT_EQ(doc["job"]["state"], "queued");
  EXPECT_EQ(doc["job"]["retry_of"], db.given_up);
  EXPECT_NE(doc["job"]["message"].get<std::string>().find("re-queued by tester"), std::string::npos);
  auto queued = get_valid(*s.client, "/api/v1/jobs?state=queued", 200, "jobs");
  ASSERT_EQ(queued["jobs"].size(), 1u);
  EXPECT_EQ(queued["jobs"][0]["commit_sha"], kSha);
  EXPECT_EQ(get_valid(*s.client, "/api/v1/jobs", 200, "jobs")["counts"]["gave_up"], 0);

  // Once: a second request says why not; an empty body is {}.
  auto again = s.client->Post(requeue_path(kSha).c_str(), bearer(kToken), "", "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 400);
  auto error = body_json(again);
  EXPECT_TRUE(matches_schema(error, "error"));
  EXPECT_EQ(error["error"]["field"], "commit");
  EXPECT_NE(error["error"]["message"].get<std::string>().find("is queued"), std::string::npos) << error;
}

TEST(QueueApi, RequeueAnswersBadInputClearly) {
  QueueDb db;
  Running s(db.writable());
  struct Case {
    std::string path, body;
    int status;
    std::string field;
  };
  for (const auto& c : {Case{requeue_path(kOtherSha), "{}", 400, "commit"},        // done, not given up
                        Case{requeue_path("abcdef12"), "{}", 404, "commit"},       // no such commit
                        Case{requeue_path(kSha), "not json", 400, "body"},
                        Case{requeue_path(kSha), R"({"by":42})", 400, "body.by"},
                        Case{requeue_path(kSha), R"({"by":"x","extra":1})", 400, "body"},
                        Case{requeue_path(kSha), R"({"by":""})", 400, "body.by"}}) {
    auto r = s.client->Post(c.path.c_str(), bearer(kToken), c.body, "application/json");
    ASSERT_TRUE(r) << c.path;
    EXPECT_EQ(r->status, c.status) << c.path << " " << c.body << ": " << r->body;
    auto doc = body_json(r);
    EXPECT_TRUE(matches_schema(doc, "error"));
    EXPECT_EQ(doc["error"].value("field", ""), c.field) << c.path << " " << c.body;
  }
  // A path that is no sha is no route.
  auto r = s.client->Post("/api/v1/commits/not-a-sha/requeue", bearer(kToken), "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(body_json(s.client->Get("/api/v1/jobs?state=gave_up"))["jobs"].size(), 1u);
}

TEST(WebhooksApi, TheOutboxIsListedByStateWithoutTheSecretsOfItsUrls) {
  perfwatch::testing::TempDir dir{"perfwatch-web-outbox"};
  const auto path = dir / "outbox.db";
  {
    auto db = store::Database::open(path);
    ASSERT_TRUE(db.has_value());
    store::OutboxWriter out(*db);
    for (int i = 0; i < 3; ++i) {
      store::OutboxMessage m;
      m.url = "https://bot:pa55@hooks.example.com:8443/services/T0/B0/S3CRET?key=K3Y";
      m.event = "regression";
      m.commit_sha = kSha;
      m.body = {{"event", "regression"}, {"text", "<script>alert(1)</script>"}};
      ASSERT_TRUE(out.add(m).has_value());
    }
    ASSERT_TRUE(out.delivered(1).has_value());
    ASSERT_TRUE(out.attempt_failed(2, "webhook https://hooks.example.com: POST answered 500", std::nullopt).has_value());
  }
  Running s(read_only_options(path));
  auto doc = get_valid(*s.client, "/api/v1/webhooks", 200, "webhooks");
  EXPECT_EQ(doc["state"], "any");
  EXPECT_EQ(doc["counts"]["pending"], 1);
  EXPECT_EQ(doc["counts"]["delivered"], 1);
  EXPECT_EQ(doc["counts"]["failed"], 1);
  ASSERT_EQ(doc["messages"].size(), 3u);
  EXPECT_EQ(doc["messages"][0]["id"], 3);  // newest first
  for (const auto& m : doc["messages"]) EXPECT_EQ(m["destination"], "https://hooks.example.com:8443");
  const std::string text = doc.dump();
  for (const char* secret : {"S3CRET", "K3Y", "pa55", "services"}) EXPECT_EQ(text.find(secret), std::string::npos) << secret;

  auto failed = get_valid(*s.client, "/api/v1/webhooks?state=failed", 200, "webhooks");
  ASSERT_EQ(failed["messages"].size(), 1u);
  EXPECT_EQ(failed["messages"][0]["attempts"], 1);
  EXPECT_EQ(failed["messages"][0]["last_error"], "webhook https://hooks.example.com: POST answered 500");
  EXPECT_TRUE(failed["messages"][0]["next_attempt_at"].is_null());
  auto page = get_valid(*s.client, "/api/v1/webhooks?limit=1&offset=1", 200, "webhooks");
  EXPECT_TRUE(page["has_more"].get<bool>());
  EXPECT_EQ(page["messages"][0]["id"], 2);
  expect_error(*s.client, "/api/v1/webhooks?state=sent", 400, "bad_parameter", "state");
  expect_error(*s.client, "/api/v1/webhooks?limit=0", 400, "bad_parameter", "limit");
  expect_error(*s.client, "/api/v1/webhooks?url=x", 400, "bad_parameter", "url");
}

}  // namespace
}  // namespace perfwatch::web::testing
