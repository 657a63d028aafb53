// One model, several printers: the real `perfwatch` binary's --json answers
// and the API's, over one database (the web tests' fixture), are validated
// against the same schemas/api/ schema and must be the same object.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "store/outbox_store.h"
#include "tests/support/git_fixture.h"
#include "web_test_support.h"

namespace perfwatch::views {
namespace {

using nlohmann::json;
using web::testing::FixtureDb;
using web::testing::Running;

class CliMatchesApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = new FixtureDb();
    web::ServerOptions options = web::testing::read_only_options(db_->path);
    options.limits.expensive_burst = 1e6;  // many requests at once: the rate limit has its own test
    running_ = new Running(options);
  }
  static void TearDownTestSuite() {
    delete running_;
    delete db_;
    running_ = nullptr;
    db_ = nullptr;
  }

  static const web::testing::FixtureInfo& info() { return db_->info; }

  // `perfwatch --db FIXTURE <args>`: stdout as JSON.
  static json cli(const std::string& args) {
    const std::string out = perfwatch::testing::shell(std::string(PERFWATCH_BIN) + " --db '" + db_->path.string() +
                                                      "' " + args);
    auto doc = json::parse(out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << args << ": not JSON: " << out.substr(0, 300);
    return doc;
  }

  // The CLI's answer and the API's, each valid against schemas/api/<schema>,
  // and equal.
  static void same(const std::string& cli_args, const std::string& api_path, const std::string& schema) {
    SCOPED_TRACE("perfwatch " + cli_args + "  vs  GET " + api_path);
    const json from_cli = cli(cli_args);
    const json from_api = web::testing::get_valid(*running_->client, api_path, 200, schema);
    EXPECT_TRUE(web::testing::matches_schema(from_cli, schema));
    EXPECT_EQ(from_cli["schema_version"], 3);
    EXPECT_EQ(from_cli, from_api) << "cli: " << from_cli.dump().substr(0, 1500)
                                  << "\napi: " << from_api.dump().substr(0, 1500);
  }

  static FixtureDb* db_;
  static Running* running_;
};
FixtureDb* CliMatchesApi::db_ = nullptr;
Running* CliMatchesApi::running_ = nullptr;

TEST_F(CliMatchesApi, Flags) {
  same("flags --json", "/api/v1/flags", "flags");
  same("query flags --all --json", "/api/v1/flags?state=any", "flags");
  same("query flags --acknowledged --json", "/api/v1/flags?state=acknowledged", "flags");
  same("query flags --kind regression --commit " + info().regression_sha.substr(0, 12) + " --limit 5 --json",
       "/api/v1/flags?kind=regression&commit=" + info().regression_sha.substr(0, 12) + "&limit=5", "flags");
  // Not vacuous: the open regressions of the slow commit are there.
  EXPECT_EQ(cli("query flags --kind regression --commit " + info().regression_sha + " --json")["flags"].size(), 18u);
}

TEST_F(CliMatchesApi, AlertGroupsAndInvestigations) {
  same("flags groups --json", "/api/v1/alert-groups", "alert_groups");
  same("flags groups --all --limit 3 --json", "/api/v1/alert-groups?state=any&limit=3", "alert_groups");
  same("query investigations --json", "/api/v1/investigations", "investigations");
  same("query investigations --search C64 --limit 2 --json", "/api/v1/investigations?q=C64&limit=2", "investigations");
  // Not vacuous: the slow commit's 18 flags are one open group.
  const json groups = cli("flags groups --commit " + info().regression_sha + " --json")["groups"];
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0]["cells"], 18);
  EXPECT_EQ(groups[0]["open"], 18);
}

TEST_F(CliMatchesApi, Experiments) {
  same("query experiments --json", "/api/v1/experiments", "experiments");
  same("query experiments --param num_warps=8 --verdict rejected --json",
       "/api/v1/experiments?param=num_warps%3D8&verdict=rejected", "experiments");
  same("query experiments --search C64 --limit 3 --json", "/api/v1/experiments?q=C64&limit=3", "experiments");
  const std::string id = std::to_string(info().rejected_experiment);
  same("experiment show " + id + " --json", "/api/v1/experiments/" + id, "experiment");
  const json one = cli("experiment show " + id + " --json");
  EXPECT_FALSE(one["evidence"].empty());
  EXPECT_FALSE(one["headlines"].empty());
}

TEST_F(CliMatchesApi, History) {
  // The CLI names the point by its key, the API by its label: the same point, the same document.
  for (const auto& variant : info().variants) {
    same("query history --variant " + variant + " --point " + info().point_keys.front() + " --json",
         "/api/v1/history?variant=" + variant + "&point=C1", "history");
  }
  same("query history --variant " + info().baseline_variant + " --point C96 --limit 4 --json",
       "/api/v1/history?variant=" + info().baseline_variant + "&point=batch%3D96&limit=4", "history");
  // Any declared metric, the judged one or not.
  same("query history --variant " + info().baseline_variant + " --point C8 --metric tokens_per_s --json",
       "/api/v1/history?variant=" + info().baseline_variant + "&point=C8&metric=tokens_per_s", "history");
}

TEST_F(CliMatchesApi, RunsAndCommits) {
  same("query runs --json", "/api/v1/commits?runs=true", "commits");
  same("query runs --limit 3 --json", "/api/v1/commits?runs=true&limit=3", "commits");
  same("query runs --commit " + info().regression_sha.substr(0, 10) + " --json",
       "/api/v1/commits?runs=true&commit=" + info().regression_sha.substr(0, 10), "commits");
  const json listed = cli("query runs --json");
  ASSERT_FALSE(listed["commits"].empty());
  EXPECT_TRUE(listed["commits"][0].contains("runs"));

  for (auto run : {info().ok_runs.front(), info().ok_runs.back(), info().running_run}) {
    same("query runs --run " + std::to_string(run) + " --json", "/api/v1/runs/" + std::to_string(run), "run");
  }
  // --latest picks a run; the API's document of that run is the same object.
  const json latest = cli("query runs --latest --json");
  ASSERT_TRUE(latest["run"].is_object());
  same("query runs --latest --json", "/api/v1/runs/" + std::to_string(latest["run"]["id"].get<std::int64_t>()), "run");
}

TEST_F(CliMatchesApi, JobsAndWebhooks) {
  same("jobs --json", "/api/v1/jobs", "jobs");
  same("jobs --state running --limit 5 --json", "/api/v1/jobs?state=running&limit=5", "jobs");
  EXPECT_EQ(cli("jobs --state running --json")["jobs"].size(), 1u);
  // The outbox: a message delivered, one failed, one pending, written here.
  {
    auto db = store::Database::open(db_->path);
    ASSERT_TRUE(db.has_value()) << db.error().to_string();
    store::OutboxWriter out(*db);
    for (int i = 0; i < 3; ++i) {
      store::OutboxMessage m;
      m.url = "https://hooks.example.com/services/T0/B0/secret";
      m.event = "regression";
      m.flag_id = info().regression_flag;
      m.commit_sha = info().regression_sha;
      m.body = {{"event", "regression"}, {"text", "perfwatch: regression"}};
      auto added = out.add(m);
      ASSERT_TRUE(added.has_value()) << added.error().to_string();
      if (i == 0) {
        ASSERT_TRUE(out.delivered(added->id).has_value());
      }
      if (i == 1) {
        ASSERT_TRUE(out.attempt_failed(added->id, "POST answered 500", std::nullopt).has_value());
      }
    }
  }
  same("query webhooks --json", "/api/v1/webhooks", "webhooks");
  same("query webhooks --state failed --json", "/api/v1/webhooks?state=failed", "webhooks");
  same("query webhooks --flag " + std::to_string(info().regression_flag) + " --limit 2 --json",
       "/api/v1/webhooks?flag=" + std::to_string(info().regression_flag) + "&limit=2", "webhooks");
  EXPECT_EQ(cli("query webhooks --json")["messages"].size(), 3u);
}

}  // namespace
}  // namespace perfwatch::views
