// make_adapter_repo.sh, the generator of the planted-slowdown repos the
// end-to-end tests watch: the history it promises, a manifest the v2 schema
// accepts, and (command kind) a slowdown the command adapter really measures
// at the slow commit and not before it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "schemas/schema.h"
#include "tests/adapters/adapter_harness.h"
#include "tests/support/git_fixture.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::testing {
namespace {

using nlohmann::json;

std::map<std::string, std::string> generate(const std::string& kind, const std::filesystem::path& dir,
                                            const std::string& extra = "") {
  std::string out = shell("'" + (tests_dir() / "make_adapter_repo.sh").string() + "' " + kind + " '" + dir.string() +
                          "' " + extra);
  std::map<std::string, std::string> keys;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) keys[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return keys;
}

std::string git(const std::filesystem::path& repo, const std::string& args) {
  return shell("git -C '" + repo.string() + "' " + args);
}

void expect_history(const std::map<std::string, std::string>& k, const std::filesystem::path& repo,
                    const std::string& watched) {
  EXPECT_EQ(git(repo, "rev-list --reverse HEAD"),
            k.at("base") + "\n" + k.at("docs") + "\n" + k.at("neutral") + "\n" + k.at("slow") + "\n" + k.at("after") + "\n");
  EXPECT_EQ(git(repo, "diff --name-only " + k.at("base") + " " + k.at("docs")), "README.md\n");
  EXPECT_EQ(git(repo, "diff --name-only " + k.at("neutral") + " " + k.at("slow")), watched + "\n");
  auto manifest = json::parse(git(repo, "show " + k.at("base") + ":perfwatch.json"));
  auto schema = schemas::Schema::load("manifest.v2.schema.json");
  ASSERT_TRUE(schema);
  auto ok = schema->validate(manifest, "perfwatch.json");
  EXPECT_TRUE(ok) << ok.error().to_string();
  auto paths = manifest["paths"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(paths.begin(), paths.end(), watched), paths.end());
}

TEST(AdapterRepoGenerator, GoogleBenchmarkRepoHasItsHistoryAndManifest) {
  TempDir dir;
  auto k = generate("google-benchmark", dir / "repo", "--slowdown 3");
  ASSERT_EQ(k.at("kind"), "google-benchmark");
  expect_history(k, dir / "repo", "decode_kernel.h");
  EXPECT_THAT(git(dir / "repo", "show " + k.at("slow") + ":decode_kernel.h"),
              ::testing::HasSubstr("constexpr int kPasses = 3;"));
  EXPECT_THAT(git(dir / "repo", "show " + k.at("neutral") + ":decode_kernel.h"),
              ::testing::HasSubstr("constexpr int kPasses = 1;"));
}

// The best tokens/s of ctas64 at C8 over `trials` trials of one adapter run
// at `sha`. The best, not the median: on a shared machine load only ever
// slows a trial down, so the fastest trial is the one nearest the script's
// own speed.
double best_tokens(const std::filesystem::path& repo, const std::string& sha, int trials) {
  git(repo, "checkout -q " + sha);
  json manifest = json::parse(read_file(repo / "perfwatch.json"));
  json variants = json::array();
  for (const auto& v : manifest["variants"]) variants.push_back({{"name", v["name"]}, {"params", v["params"]}});
  std::vector<json> input = {plan(variants, {{{"id", "C8"}, {"axes", {{"batch", 8}}}}}, manifest["metrics"], "tokens_per_s"),
                             measure("ctas64", "C8", trials)};
  auto run = run_adapter("command", manifest["bench"], input, repo);
  EXPECT_EQ(run.exit_code, 0) << run.dump();
  EXPECT_EQ(protocol_problems(run, input), "") << run.dump();
  double best = 0;
  for (const auto& t : run.trials("ctas64", "C8")) best = std::max(best, t["metrics"]["tokens_per_s"].get<double>());
  return best;
}

TEST(AdapterRepoGenerator, CommandRepoSlowsDownAtTheSlowCommitOnly) {
  TempDir dir;
  auto k = generate("command", dir / "repo", "--slowdown 3");
  ASSERT_EQ(k.at("kind"), "command");
  expect_history(k, dir / "repo", "tok_bench.sh");
  // Three times the work: about a third of the tokens/s. The two commits
  // take turns (neutral, slow, neutral, slow) so a burst of load on this
  // shared machine hits both, and the bar (0.8) is far from the 0.33
  // expected: what matters is that the adapter sees the slowdown, not its size.
  double neutral = 0, slow = 0;
  for (int round = 0; round < 2; ++round) {
    neutral = std::max(neutral, best_tokens(dir / "repo", k.at("neutral"), 4));
    slow = std::max(slow, best_tokens(dir / "repo", k.at("slow"), 4));
  }
  EXPECT_GT(neutral, 0);
  EXPECT_LT(slow, 0.8 * neutral) << "neutral " << neutral << " tokens/s, slow " << slow << " tokens/s";
}

TEST(AdapterRepoGenerator, RefusesAFullDirectoryAndABadFactor) {
  TempDir dir;
  write_file(dir / "repo" / "x", "x");
  EXPECT_THROW(generate("command", dir / "repo"), std::exception);
  EXPECT_THROW(generate("command", dir / "other", "--slowdown 1"), std::exception);
  EXPECT_THROW(generate("nvbench", dir / "third"), std::exception);
}

}  // namespace
}  // namespace perfwatch::testing
