// The server's small parts on their own: query parameters, the rate
// limiter's buckets, bearer tokens.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "web/auth.h"
#include "web/fair_queue.h"
#include "web/query_params.h"
#include "web/rate_limiter.h"

namespace perfwatch::web {
namespace {

TEST(QueryParams, ReadsAndChecksEachKind) {
  QueryParams::Raw raw{{"limit", "20"}, {"state", "open"}, {"sha", "ABCDEF12"}, {"q", "num warps"}, {"flag", "true"}};
  QueryParams q(raw, {"limit", "state", "sha", "q", "flag", "absent"});
  EXPECT_EQ(q.integer("limit", 5, 1, 100), 20);
  EXPECT_EQ(q.integer("absent", 5, 1, 100), 5);
  EXPECT_EQ(q.word("state", {"open", "any"}), "open");
  EXPECT_EQ(q.sha("sha"), "abcdef12");
  EXPECT_EQ(q.text("q", 50), "num warps");
  EXPECT_TRUE(q.boolean("flag", false));
  EXPECT_TRUE(q.ok());
}

TEST(QueryParams, TheFirstProblemNamesItsParameter) {
  QueryParams::Raw raw{{"limit", "1000"}, {"state", "closed"}};
  QueryParams q(raw, {"limit", "state"});
  q.integer("limit", 5, 1, 100);
  q.word("state", {"open"});
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().status, 400);
  EXPECT_EQ(q.error().field, "limit");
  EXPECT_EQ(q.error().message, "must be an integer from 1 to 100");
}

TEST(QueryParams, UnknownAndRepeatedParametersAreErrors) {
  QueryParams::Raw unknown{{"limt", "5"}};
  QueryParams a(unknown, {"limit"});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().field, "limt");
  QueryParams::Raw twice{{"limit", "5"}, {"limit", "6"}};
  QueryParams b(twice, {"limit"});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "given more than once");
  QueryParams c(twice, {"limit"}, {"limit"});
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.all_names("limit"), (std::vector<std::string>{"5", "6"}));
}

TEST(QueryParams, RejectsMalformedValues) {
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"n", "1e3"}, {"n", "12x"}, {"n", ""}, {"n", "99999999999999999999"}, {"id", "0"}, {"id", "-3"},
           {"sha", "xyz1"}, {"sha", "abc"}, {"name", "a b"}, {"name", "<script>"}, {"text", "a\x01"}, {"b", "yes"}}) {
    QueryParams::Raw raw{{name, value}};
    QueryParams q(raw, {"n", "id", "sha", "name", "text", "b"});
    if (name == "n") q.integer("n", 1, 0, 1000000);
    if (name == "id") q.id("id");
    if (name == "sha") q.sha("sha");
    if (name == "name") q.name("name");
    if (name == "text") q.text("text", 100);
    if (name == "b") q.boolean("b", false);
    EXPECT_FALSE(q.ok()) << name << "=" << value;
    if (!q.ok()) {
      EXPECT_EQ(q.error().field, name);
    }
  }
}

TEST(RateLimiter, ABucketPerClientRefilledByTime) {
  double now = 100;
  RateLimiter limiter({2.0, 3.0, 16}, [&] { return now; });
  double retry = 0;
  EXPECT_TRUE(limiter.allow("a", &retry));
  EXPECT_TRUE(limiter.allow("a", &retry));
  EXPECT_TRUE(limiter.allow("a", &retry));
  EXPECT_FALSE(limiter.allow("a", &retry));
  EXPECT_NEAR(retry, 0.5, 1e-9);         // one token every 0.5 s
  EXPECT_TRUE(limiter.allow("b", &retry));  // another client has its own bucket
  now += 0.5;
  EXPECT_TRUE(limiter.allow("a", &retry));
  EXPECT_FALSE(limiter.allow("a", &retry));
  now += 100;  // refills up to the burst, no further
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.allow("a", &retry));
  EXPECT_FALSE(limiter.allow("a", &retry));
}

TEST(RateLimiter, KeepsAtMostMaxClientsBuckets) {
  double now = 0;
  RateLimiter limiter({1.0, 1.0, 2}, [&] { return now; });
  double retry = 0;
  EXPECT_TRUE(limiter.allow("a", &retry));
  EXPECT_TRUE(limiter.allow("b", &retry));
  EXPECT_TRUE(limiter.allow("c", &retry));  // evicts the least recently seen ("a")
  EXPECT_FALSE(limiter.allow("c", &retry));
}

TEST(FairQueue, ClientsTakeTurns) {
  FairQueue<std::string> q;
  for (int i = 1; i <= 20; ++i) q.push("a", "a" + std::to_string(i));
  q.push("b", "b1");
  q.push("c", "c1");
  q.push("b", "b2");
  EXPECT_EQ(q.size(), 23u);
  // b and c wait behind one of a's, not all twenty.
  std::vector<std::string> order;
  while (auto item = q.pop()) order.push_back(*item);
  std::vector<std::string> expected = {"a1", "b1", "c1", "a2", "b2"};
  for (int i = 3; i <= 20; ++i) expected.push_back("a" + std::to_string(i));
  EXPECT_EQ(order, expected);
  EXPECT_TRUE(q.empty());
}

TEST(FairQueue, OneClientIsFirstComeFirstServed) {
  FairQueue<int> q;
  for (int i = 0; i < 5; ++i) q.push("", i);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(q.pop(), i);
  EXPECT_EQ(q.pop(), std::nullopt);
  q.push("x", 1);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.pop(), std::nullopt);
}

TEST(Auth, BearerTokens) {
  EXPECT_EQ(check_bearer("Bearer abc", "abc"), AuthResult::kOk);
  EXPECT_EQ(check_bearer("bearer abc", "abc"), AuthResult::kOk);
  EXPECT_EQ(check_bearer("Bearer abd", "abc"), AuthResult::kInvalid);
  EXPECT_EQ(check_bearer("Bearer ab", "abc"), AuthResult::kInvalid);
  EXPECT_EQ(check_bearer("Bearer abcd", "abc"), AuthResult::kInvalid);
  EXPECT_EQ(check_bearer("Bearer ABC", "abc"), AuthResult::kInvalid);
  EXPECT_EQ(check_bearer("", "abc"), AuthResult::kMissing);
  EXPECT_EQ(check_bearer("Bearer ", "abc"), AuthResult::kMissing);
  EXPECT_EQ(check_bearer("Basic abc", "abc"), AuthResult::kMissing);
  EXPECT_EQ(check_bearer("Bearer x", ""), AuthResult::kInvalid);
}

}  // namespace
}  // namespace perfwatch::web
