// The daemon's commands as a user runs them: perfwatch watch --once, then
// query, flags ack, experiment add/conclude, noise, jobs [requeue], query
// webhooks -- text for people and JSON for tools.
#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "schemas/schema.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "tests/support/git_fixture.h"
#include "tests/support/temp_dir.h"

namespace perfwatch {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class CliTest : public ::testing::Test {
 protected:
  static json manifest(const std::string& slow = "") {
    json m = {{"schema_version", 1},
              {"build", {{"command", "true"}}},
              {"paths", {"src/", "perfwatch.json"}},
              {"bench", {{"command", FAKE_BENCH_PATH}, {"timeout_s", 60}, {"idle_timeout_s", 20}, {"env", json::object()}}},
              {"variants",
               {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}, {"num_warps", 4}}}},
                {{"name", "w8"}, {"params", {{"block_t", 32}, {"num_warps", 8}}}, {"hypothesis", "8 warps hide latency"}}}},
              {"sweep", {{"batch", {1, 8}}}},
              {"trials", {{"min", 3}, {"max", 6}, {"target_rel_ci", 0.5}, {"budget_s", 30}}}};
    if (!slow.empty()) m["bench"]["env"]["FAKE_BENCH_SLOW"] = slow;
    return m;
  }
  std::string commit(const json& m, const std::string& message, const std::string& code) {
    return repo_.commit({{"perfwatch.json", m.dump(2)}, {"src/k.c", code}}, message);
  }
  // Runs perfwatch with the test's database; returns stdout (stderr to a file).
  std::string pw(const std::string& args) {
    return testing::shell(std::string(PERFWATCH_BIN) + " --db '" + (dir_ / "pw.db").string() + "' " + args + " 2>>'" +
                          (dir_ / "stderr.log").string() + "'");
  }
  int pw_status(const std::string& args) {
    return std::system((std::string(PERFWATCH_BIN) + " --db '" + (dir_ / "pw.db").string() + "' " + args +
                        " >/dev/null 2>>'" + (dir_ / "stderr.log").string() + "'")
                           .c_str());
  }
  std::string repo() const { return "--repo '" + repo_.path().string() + "'"; }

  testing::GitFixture repo_;
  testing::TempDir dir_{"perfwatch-cli"};
};

TEST_F(CliTest, WatchThenQueryAcknowledgeAndConclude) {
  std::string a = commit(manifest("w8:1.3"), "baseline", "1");
  std::string b = commit(manifest("base:1.5"), "slower base\n\nPerf-Hypothesis: a bigger base tile\nPerf-Experiment: tiles", "2");
  pw("watch " + repo() + " --since " + a + " --once");
  const std::string log = testing::read_file(dir_ / "stderr.log");
  EXPECT_THAT(log, HasSubstr("commit=" + b.substr(0, 10) + " step=flag kind=regression"));

  // Flags, as text and JSON.
  std::string flags = pw("flags");
  EXPECT_THAT(flags, HasSubstr("regression"));
  EXPECT_THAT(flags, HasSubstr("+50.0%"));
  // base got slower; w8, no longer slowed, got faster.
  // --json answers are the API's documents (tests/views checks them against the API).
  EXPECT_EQ(json::parse(pw("query flags --json"))["flags"].size(), 4u);
  json fj = json::parse(pw("query flags --kind regression --json"))["flags"];
  ASSERT_EQ(fj.size(), 2u);
  const int id = fj[0]["id"].get<int>();
  std::string acked = pw("flags ack " + std::to_string(id) + " --reason 'expected: bigger tile' --by tester");
  EXPECT_THAT(acked, HasSubstr("acked (expected: bigger tile)"));
  EXPECT_EQ(json::parse(pw("flags --kind regression --json"))["flags"].size(), 1u);  // open ones
  EXPECT_EQ(json::parse(pw("flags --acknowledged --json"))["flags"].size(), 1u);
  EXPECT_NE(pw_status("flags ack 999 --reason x"), 0);

  // "Did we ever try num_warps=8? What happened?"
  std::string tried = pw("query experiments --param num_warps=8 --verdict rejected");
  EXPECT_THAT(tried, HasSubstr("num_warps=8 REJECTED: worse +"));
  EXPECT_THAT(tried, HasSubstr("time_us at C1, C8"));
  EXPECT_THAT(tried, HasSubstr("8 warps hide latency"));
  json ej = json::parse(pw("query experiments --search 'bigger tile' --json"))["experiments"];
  ASSERT_EQ(ej.size(), 1u);
  EXPECT_EQ(ej[0]["verdict"], "mixed");  // base worse, w8 (no longer slowed) better
  EXPECT_THAT(ej[0]["headlines"].dump(), HasSubstr("base REJECTED: worse +50.0% time_us"));
  EXPECT_THAT(ej[0]["headlines"].dump(), HasSubstr("w8 ACCEPTED: better -"));
  EXPECT_EQ(ej[0]["evidence"].size(), 4u);
  const int exp_id = ej[0]["id"].get<int>();
  std::string concluded =
      pw("experiment conclude " + std::to_string(exp_id) + " --conclusion 'the bigger tile spills; keep 32'");
  EXPECT_THAT(concluded, HasSubstr("conclusion: the bigger tile spills; keep 32"));
  EXPECT_THAT(pw("query experiments --brief"), HasSubstr("REJECTED"));

  // By hand, from the runs stored.
  std::string added = pw("experiment add " + repo() + " --hypothesis 'w8 at the slow commit' --baseline variant:base "
                         "--candidate variant:w8 --commit " + b);
  EXPECT_THAT(added, HasSubstr("(manual"));
  EXPECT_NE(pw_status("experiment add " + repo() + " --hypothesis x --baseline variant:base --candidate " + a), 0);

  // Runs and history.
  std::string runs = pw("query runs");
  EXPECT_THAT(runs, HasSubstr(b.substr(0, 10)));
  // The newest ok run is b's (its last bench run): its full table, deltas against base.
  std::string latest = pw("query runs --latest");
  EXPECT_THAT(latest, HasSubstr("of " + b.substr(0, 10)));
  EXPECT_THAT(latest, HasSubstr("C8 "));  // the point's label
  EXPECT_THAT(latest, HasSubstr("tokens/s"));  // a column per other declared metric, headed by its unit
  json lj = json::parse(pw("query runs --latest --commit " + a + " --json"));
  EXPECT_EQ(lj["commit"]["sha"], a);
  EXPECT_EQ(lj["manifest"]["baseline"], "base");
  json rj = json::parse(pw("query runs --commit " + b.substr(0, 10) + " --json"));
  ASSERT_EQ(rj["commits"].size(), 1u);
  EXPECT_EQ(rj["commits"][0]["sha"], b);
  EXPECT_FALSE(rj["commits"][0]["runs"].empty());
  EXPECT_NE(pw_status("query runs --latest --commit 0000000000"), 0);
  json hj = json::parse(pw("query history --variant base --point C1 --json"));
  // The same point by its key, and by the axes that name it alone.
  EXPECT_EQ(json::parse(pw("query history --variant base --point batch=1,dtype=bf16,heads=16,topk=2048 --json")), hj);
  EXPECT_EQ(json::parse(pw("query history --variant base --point batch=1 --json")), hj);
  ASSERT_EQ(hj["entries"].size(), 2u);
  EXPECT_FALSE(hj["entries"][1]["flag"].is_null());
  // Both commits judged: their stored geomean of run medians, with a CI.
  EXPECT_TRUE(hj["entries"][1]["pooled"].get<bool>());
  EXPECT_GT(hj["entries"][1]["geomean_of_run_medians"].get<double>(), 0);
  // The band and how it was computed (calibrated by now: the regression was
  // measured again before it was flagged, 6 runs a side).
  EXPECT_THAT(pw("query history --variant base --point C1"), HasSubstr("prediction band"));
  EXPECT_THAT(pw("query history --variant base --point C1"), HasSubstr("geometric mean"));
  EXPECT_NE(pw_status("query history --variant base --point b7_nope"), 0);
  EXPECT_NE(pw_status("query history --variant base --point heads=16"), 0);  // names both points

  // A/A calibration, said how.
  std::string noise = pw("noise " + repo() + " --runs 3");
  EXPECT_THAT(noise, HasSubstr("A/A noise calibration of " + b.substr(0, 10) + ": 3 of 3 runs ok"));
  EXPECT_THAT(noise, HasSubstr("t(0.975, df) x s x sqrt(2/R)"));
  json nj = json::parse(pw("noise " + repo() + " --runs 2 --json"));
  auto noise_schema = schemas::Schema::load("cli/noise.schema.json");
  ASSERT_TRUE(noise_schema) << noise_schema.error().to_string();
  EXPECT_TRUE(noise_schema->validate(nj, "noise --json")) << nj.dump();
  EXPECT_EQ(nj["schema_version"], 3);
  EXPECT_EQ(nj["ok_runs"], 2);
  EXPECT_EQ(nj["bands"].size(), 4u);  // 2 variants x 2 points
  EXPECT_EQ(nj["bands"][0]["point"]["label"].get<std::string>().substr(0, 1), "C");
}

// Git data that is not UTF-8 (a Latin-1 subject, author and trailer) and a
// subject with terminal escapes, watched and queried end to end: the daemon
// measures the commit, every --json answer is valid JSON with U+FFFD where
// the bytes were, and the text output shows the escapes instead of obeying them.
TEST_F(CliTest, Latin1AndControlCharactersInGitDataAreStoredAndShownSafely) {
  const std::string r = "\xEF\xBF\xBD";
  std::string a = commit(manifest(), "baseline", "1");
  std::string b = repo_.commit_raw({{"perfwatch.json", manifest().dump(2)}, {"src/k.c", "2"}}, "Ren\xE9 M\xFCller",
                                   "Caf\xE9 \x1b[2J\x1b]0;owned\x07 tiles\n\nPerf-Hypothesis: na\xEFve split");
  EXPECT_EQ(pw_status("watch " + repo() + " --since " + a + " --once"), 0) << testing::read_file(dir_ / "stderr.log");

  json rj = json::parse(pw("query runs --commit " + b.substr(0, 10) + " --json"));
  ASSERT_EQ(rj["commits"].size(), 1u);
  const json& c = rj["commits"][0];
  EXPECT_EQ(c["subject"], "Caf" + r + " \x1b[2J\x1b]0;owned\x07 tiles");
  EXPECT_EQ(c["author"], "Ren" + r + " M" + r + "ller");
  EXPECT_FALSE(c["runs"].empty()) << "the commit was measured, not abandoned";
  json ej = json::parse(pw("query experiments --json"))["experiments"];
  ASSERT_FALSE(ej.empty());
  EXPECT_THAT(ej.dump(), HasSubstr("na" + r + "ve split"));

  for (const std::string& text : {pw("query runs"), pw("query history --variant base --point C1"),
                                  pw("query experiments")}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  }
  EXPECT_THAT(pw("query history --variant base --point C1"),
              HasSubstr("Caf" + r + " \\x1b[2J\\x1b]0;owned\\x07 tiles"));
  const std::string log = testing::read_file(dir_ / "stderr.log");
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << "the daemon's log lines escape control characters too";
}

// A commit given up on (its job cut off three times: three daemons killed
// while it ran), listed and re-queued from the command line, then measured.
TEST_F(CliTest, AGivenUpCommitIsListedAndRequeuedThenMeasured) {
  std::string a = commit(manifest(), "a", "1");
  {
    auto db = store::Database::open(dir_ / "pw.db");
    ASSERT_TRUE(db.has_value()) << db.error().to_string();
    const auto canonical = std::filesystem::canonical(repo_.path());  // as `watch` records it
    auto repo_id = store::RepoWriter(*db).ensure_repo({.path = canonical.string(), .url = "", .name = canonical.filename().string()});
    ASSERT_TRUE(repo_id.has_value());
    store::JobQueue q(*db);
    ASSERT_TRUE(q.enqueue({.repo_id = *repo_id, .commit_sha = a, .branch = "main"}).has_value());
    for (int crash = 0; crash < 3; ++crash) {
      ASSERT_TRUE(q.claim_next().has_value());
      ASSERT_TRUE(q.recover_after_crash(3).has_value());
    }
  }
  const std::string listed = pw("jobs --state gave_up");
  EXPECT_THAT(listed, HasSubstr("jobs: 2 cut_off, 1 gave_up"));
  EXPECT_THAT(listed, HasSubstr("gave up after 3 attempt(s), each cut off"));
  EXPECT_THAT(listed, HasSubstr("re-queue with: perfwatch jobs requeue " + a.substr(0, 10)));
  json jj = json::parse(pw("jobs --json"));
  auto jobs_schema = schemas::Schema::load("api/jobs.schema.json");
  ASSERT_TRUE(jobs_schema) << jobs_schema.error().to_string();
  EXPECT_TRUE(jobs_schema->validate(jj, "jobs --json")) << jj.dump();
  EXPECT_EQ(jj["counts"]["gave_up"], 1);
  EXPECT_EQ(jj["jobs"][0]["state"], "gave_up");
  EXPECT_NE(pw_status("jobs --state given_up"), 0);

  // Re-queued by a revision in --repo; then once only, and bad input is named.
  EXPECT_THAT(pw("jobs requeue " + repo() + " HEAD --by tester"), HasSubstr("queued again as job 4 (redoes job 3"));
  EXPECT_EQ(WEXITSTATUS(pw_status("jobs requeue " + a.substr(0, 10))), 2);  // bad input
  EXPECT_THAT(testing::read_file(dir_ / "stderr.log"), HasSubstr("no job of it was given up: its newest job, 4, is queued"));
  EXPECT_EQ(WEXITSTATUS(pw_status("jobs requeue 'zz;rm -rf /'")), 2);  // bad input
  EXPECT_THAT(testing::read_file(dir_ / "stderr.log"), HasSubstr("must be a sha or a prefix of 4 to 64 hex digits"));
  EXPECT_EQ(WEXITSTATUS(pw_status("jobs requeue 0123abcd")), 2);  // bad input
  EXPECT_THAT(testing::read_file(dir_ / "stderr.log"), HasSubstr("commit 0123abcd: no job of this commit"));

  EXPECT_EQ(pw_status("watch " + repo() + " --once"), 0) << testing::read_file(dir_ / "stderr.log");
  json done = json::parse(pw("jobs --commit " + a + " --json"));
  ASSERT_EQ(done["jobs"].size(), 4u);
  EXPECT_EQ(done["jobs"][0]["state"], "done") << done.dump();
  EXPECT_EQ(done["jobs"][0]["retry_of"], 3);
  EXPECT_EQ(done["jobs"][1]["state"], "cut_off");
  EXPECT_THAT(done["jobs"][1]["message"].get<std::string>(), HasSubstr("re-queued by tester as job 4"));
}

// Regressions announced to a webhook that is down: the messages wait in the
// outbox, with their attempts and last error, for `query webhooks` to show.
TEST_F(CliTest, WebhookMessagesThatCouldNotBeDeliveredAreListed) {
  std::string a = commit(manifest(), "baseline", "1");
  std::string b = commit(manifest("base:1.5"), "slower base", "2");
  EXPECT_EQ(pw_status("watch " + repo() + " --since " + a + " --once --webhook http://127.0.0.1:1/hooks/S3CRET"), 0)
      << testing::read_file(dir_ / "stderr.log");
  const std::string text = pw("query webhooks");
  EXPECT_THAT(text, HasSubstr("webhook messages: 2 pending, 0 delivered, 0 failed"));
  EXPECT_THAT(text, HasSubstr("regression"));
  EXPECT_THAT(text, HasSubstr(b.substr(0, 10)));
  EXPECT_THAT(text, HasSubstr("to http://127.0.0.1:1"));
  EXPECT_THAT(text, HasSubstr("last error: POST failed"));
  EXPECT_EQ(text.find("S3CRET"), std::string::npos) << "a webhook URL's path is often its secret";
  json wj = json::parse(pw("query webhooks --state pending --json"));
  auto schema = schemas::Schema::load("api/webhooks.schema.json");
  ASSERT_TRUE(schema) << schema.error().to_string();
  EXPECT_TRUE(schema->validate(wj, "query webhooks --json")) << wj.dump();
  ASSERT_EQ(wj["messages"].size(), 2u);
  EXPECT_EQ(wj["messages"][0]["attempts"], 1);
  EXPECT_EQ(wj["messages"][0]["commit_sha"], b);
  EXPECT_EQ(wj["messages"][0]["body"]["event"], "regression");
  EXPECT_EQ(wj["messages"][0]["destination"], "http://127.0.0.1:1");
  EXPECT_TRUE(json::parse(pw("query webhooks --state delivered --json"))["messages"].empty());
  EXPECT_EQ(WEXITSTATUS(pw_status("query webhooks --state sent")), 2);  // bad input
  EXPECT_THAT(testing::read_file(dir_ / "stderr.log"), HasSubstr("--state sent: must be pending, delivered, failed or any"));
}

// Alert groups from the command line: the flags of a commit listed as one
// group with its summary, triaged as one with a reason.
TEST_F(CliTest, AnAlertGroupIsListedWithItsSummaryAndTriagedAsOne) {
  std::string a = commit(manifest("w8:1.3"), "baseline", "1");
  std::string b = commit(manifest("base:1.5"), "slower base", "2");
  ASSERT_EQ(pw_status("watch " + repo() + " --since " + a + " --once"), 0) << testing::read_file(dir_ / "stderr.log");
  const std::string groups = pw("flags groups");
  EXPECT_THAT(groups, HasSubstr(b.substr(0, 10)));
  EXPECT_THAT(groups, HasSubstr("+50.0%"));  // the worst change: the regression, before the improvement
  EXPECT_THAT(groups, HasSubstr("improvement,regression"));
  json gj = json::parse(pw("flags groups --json"));
  auto schema = schemas::Schema::load("api/alert_groups.schema.json");
  ASSERT_TRUE(schema) << schema.error().to_string();
  EXPECT_TRUE(schema->validate(gj, "flags groups --json")) << gj.dump();
  ASSERT_EQ(gj["groups"].size(), 1u) << "4 flags, one group";
  EXPECT_EQ(gj["groups"][0]["cells"], 4);
  EXPECT_EQ(gj["groups"][0]["worst"]["variant"], "base");
  EXPECT_TRUE(gj["groups"][0]["worst"]["regression"].get<bool>());

  const std::string triaged = pw("flags triage " + b.substr(0, 8) + " --as expected --reason 'bigger tile, on purpose' --by tester");
  EXPECT_THAT(triaged, HasSubstr("expected: bigger tile, on purpose -- tester"));
  EXPECT_THAT(pw("flags groups"), HasSubstr("no open alert groups"));
  EXPECT_TRUE(json::parse(pw("flags --json"))["flags"].empty()) << "every flag of the group acknowledged";
  EXPECT_THAT(pw("flags groups --closed"), HasSubstr(b.substr(0, 10)));
  EXPECT_EQ(WEXITSTATUS(pw_status("flags triage " + b.substr(0, 8) + " --as wontfix --reason x")), 2);
  EXPECT_THAT(testing::read_file(dir_ / "stderr.log"), HasSubstr("--as wontfix: must be ack, invalid or expected"));
  EXPECT_EQ(WEXITSTATUS(pw_status("flags triage " + a.substr(0, 8) + " --as ack --reason x")), 2);
  EXPECT_THAT(testing::read_file(dir_ / "stderr.log"), HasSubstr("has no standing flag: no alert group to triage"));
}

// Every error a user meets first says what to do instead.
TEST_F(CliTest, ErrorsNameTheFix) {
  const std::string db = (dir_ / "pw.db").string();
  const std::string err = (dir_ / "stderr.log").string();
  auto run = [&](const std::string& args) {
    return WEXITSTATUS(std::system((std::string(PERFWATCH_BIN) + " " + args + " >/dev/null 2>'" + err + "'").c_str()));
  };
  auto said = [&] { return testing::read_file(dir_ / "stderr.log"); };

  // A query against a database that is not there creates none.
  EXPECT_NE(run("--db '" + db + "' flags"), 0);
  EXPECT_THAT(said(), HasSubstr("no database there (queries never create one)"));
  EXPECT_FALSE(std::filesystem::exists(db));

  // A mistyped subcommand, at the top and below it.
  EXPECT_EQ(run("--db '" + db + "' flgs"), 2);
  EXPECT_THAT(said(), HasSubstr("unknown command 'flgs': did you mean 'flags'?"));
  EXPECT_THAT(said(), HasSubstr("commands: "));
  EXPECT_EQ(run("query histroy"), 2);
  EXPECT_THAT(said(), HasSubstr("unknown command 'histroy' of 'query': did you mean 'history'?"));
  EXPECT_EQ(run("query"), 2);
  EXPECT_THAT(said(), HasSubstr("a command is needed after 'query': one of experiments, investigations, runs"));
  EXPECT_EQ(run("--help"), 0);

  std::string a = commit(manifest(), "baseline", "1");
  commit(manifest("base:1.5"), "slower base", "2");
  // --db after the subcommand, as every other option.
  ASSERT_EQ(run("watch " + repo() + " --since " + a + " --once --db '" + db + "'"), 0) << said();
  ASSERT_TRUE(std::filesystem::exists(db));
  EXPECT_EQ(run("query history --variant base --point C1 --db '" + db + "'"), 0) << said();

  // The label the dashboard shows, refused with the ones there are.
  EXPECT_EQ(run("query history --variant base --point C48 --db '" + db + "'"), 2);
  EXPECT_THAT(said(), HasSubstr("--point: 'C48': no such point; the points are C1, C8"));
  // An unknown variant is an error listing the variants, not an empty table.
  EXPECT_EQ(run("query history --variant w16 --point C1 --db '" + db + "'"), 2);
  EXPECT_THAT(said(), HasSubstr("--variant: 'w16': no such variant; the variants are base, w8"));
  EXPECT_EQ(run("flags --variant w16 --db '" + db + "'"), 2);
  EXPECT_THAT(said(), HasSubstr("the variants are base, w8"));
  // An option no command has is CLI11's to report, not a command.
  EXPECT_EQ(run("flags --colour w16 --db '" + db + "'"), 2);
  EXPECT_THAT(said(), ::testing::Not(HasSubstr("unknown command")));
  // A flag, then an option and its value (as scripts/demo_summary.sh asks):
  // the value is no command, whichever comes first.
  EXPECT_EQ(run("--db '" + db + "' flags --all " + repo()), 0) << said();
  EXPECT_EQ(run("--db '" + db + "' flags " + repo() + " --all"), 0) << said();
  EXPECT_EQ(run("--db '" + db + "' query runs --latest " + repo()), 0) << said();
}

// `bench` writing to a log, not a terminal: a progress line per point, not per trial.
TEST_F(CliTest, BenchIntoALogPrintsALinePerPointNotPerTrial) {
  commit(manifest(), "baseline", "1");
  ASSERT_EQ(pw_status("bench " + repo()), 0) << testing::read_file(dir_ / "stderr.log");
  const std::string log = testing::read_file(dir_ / "stderr.log");
  int lines = 0;
  for (std::size_t at = log.find("  point "); at != std::string::npos; at = log.find("  point ", at + 1)) ++lines;
  // 2 points x 2 variants x 3..6 trials were measured; a line a point (and
  // one every 10 s, which the fake bench does not take).
  EXPECT_GE(lines, 2) << log;
  EXPECT_LE(lines, 3) << log;
}

}  // namespace
}  // namespace perfwatch
