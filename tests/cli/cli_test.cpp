// The daemon's commands as a user runs them: perfwatch watch --once, then
// query, flags ack, experiment add/conclude, noise -- text for people and
// JSON for tools.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "schemas/schema.h"
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
  EXPECT_THAT(tried, HasSubstr("time_us at b1_h16_k2048_bf16, b8_h16_k2048_bf16"));
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
  EXPECT_THAT(latest, HasSubstr("b8_h16_k2048_bf16"));
  json lj = json::parse(pw("query runs --latest --commit " + a + " --json"));
  EXPECT_EQ(lj["commit"]["sha"], a);
  EXPECT_EQ(lj["manifest"]["baseline"], "base");
  json rj = json::parse(pw("query runs --commit " + b.substr(0, 10) + " --json"));
  ASSERT_EQ(rj["commits"].size(), 1u);
  EXPECT_EQ(rj["commits"][0]["sha"], b);
  EXPECT_FALSE(rj["commits"][0]["runs"].empty());
  EXPECT_NE(pw_status("query runs --latest --commit 0000000000"), 0);
  json hj = json::parse(pw("query history --variant base --point b1_h16_k2048_bf16 --json"));
  ASSERT_EQ(hj["entries"].size(), 2u);
  EXPECT_FALSE(hj["entries"][1]["flag"].is_null());
  // Both commits judged: their stored geomean of run medians, with a CI.
  EXPECT_TRUE(hj["entries"][1]["pooled"].get<bool>());
  EXPECT_GT(hj["entries"][1]["geomean_of_run_medians"].get<double>(), 0);
  // The band and how it was computed (calibrated by now: the regression was
  // measured again before it was flagged, 6 runs a side).
  EXPECT_THAT(pw("query history --variant base --point b1_h16_k2048_bf16"), HasSubstr("prediction band"));
  EXPECT_THAT(pw("query history --variant base --point b1_h16_k2048_bf16"), HasSubstr("geometric mean"));
  EXPECT_NE(pw_status("query history --variant base --point b7_nope"), 0);

  // A/A calibration, said how.
  std::string noise = pw("noise " + repo() + " --runs 3");
  EXPECT_THAT(noise, HasSubstr("A/A noise calibration of " + b.substr(0, 10) + ": 3 of 3 runs ok"));
  EXPECT_THAT(noise, HasSubstr("t(0.975, df) x s x sqrt(2/R)"));
  json nj = json::parse(pw("noise " + repo() + " --runs 2 --json"));
  auto noise_schema = schemas::Schema::load("cli/noise.schema.json");
  ASSERT_TRUE(noise_schema) << noise_schema.error().to_string();
  EXPECT_TRUE(noise_schema->validate(nj, "noise --json")) << nj.dump();
  EXPECT_EQ(nj["schema_version"], 2);
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

  for (const std::string& text : {pw("query runs"), pw("query history --variant base --point b1_h16_k2048_bf16"),
                                  pw("query experiments")}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  }
  EXPECT_THAT(pw("query history --variant base --point b1_h16_k2048_bf16"),
              HasSubstr("Caf" + r + " \\x1b[2J\\x1b]0;owned\\x07 tiles"));
  const std::string log = testing::read_file(dir_ / "stderr.log");
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << "the daemon's log lines escape control characters too";
}

}  // namespace
}  // namespace perfwatch
