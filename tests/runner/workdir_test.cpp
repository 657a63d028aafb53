// build.workdir and bench.workdir: inside the checkout, or not at all. A
// workdir that leaves the checkout (an absolute path, `..`, a symlink out) or
// that does not exist is an error naming the field; nothing runs elsewhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runner/build.h"
#include "runner/manifest.h"
#include "runner/sweep.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::runner {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

json doc_with(const std::string& build_dir, const std::string& bench_dir) {
  return {{"schema_version", 1},
          {"build", {{"command", "touch built-here"}, {"workdir", build_dir}}},
          {"paths", {"src/"}},
          {"bench", {{"command", "touch benched-here"}, {"workdir", bench_dir}}},
          {"variants", {{{"name", "base"}, {"params", json::object()}}}},
          {"sweep", {{"batch", {1}}}}};
}

struct NullSink : RunSink {
  void on_header(const json&) override {}
  void on_variant(const json&) override {}
  void on_check(const CheckLine&) override {}
  void on_trial(const TrialLine&) override {}
  void on_skipped(const SkippedLine&) override {}
  void on_point_done(const std::string&, const PointSpec&, const std::vector<double>&, int,
                     analysis::StopReason) override {}
};

class WorkdirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(checkout / "kernels");
    fs::create_directories(outside);
  }
  // Parses with workdirs that parse_manifest accepts, then sets them as a
  // checkout's contents would make them (a symlink is only seen there).
  Manifest manifest(const std::string& build_dir, const std::string& bench_dir) {
    auto m = parse_manifest(doc_with(".", "."), "perfwatch.json");
    EXPECT_TRUE(m.has_value()) << m.error().to_string();
    m->build.workdir = build_dir;
    m->bench.workdir = bench_dir;
    return *m;
  }
  testing::TempDir dir;
  fs::path checkout = dir / "checkout";
  fs::path outside = dir / "outside";
};

TEST_F(WorkdirTest, TheManifestRefusesAnAbsoluteWorkdirOrOneWithDotDot) {
  auto a = parse_manifest(doc_with("/tmp", "."), "perfwatch.json");
  ASSERT_FALSE(a.has_value());
  EXPECT_THAT(a.error().to_string(), HasSubstr("perfwatch.json: build.workdir"));
  EXPECT_THAT(a.error().to_string(), HasSubstr("absolute"));
  auto b = parse_manifest(doc_with(".", "kernels/../../x"), "perfwatch.json");
  ASSERT_FALSE(b.has_value());
  EXPECT_THAT(b.error().to_string(), HasSubstr("perfwatch.json: bench.workdir"));
  EXPECT_THAT(b.error().to_string(), HasSubstr("'..'"));
  EXPECT_TRUE(parse_manifest(doc_with("kernels", "./kernels"), "perfwatch.json").has_value());
}

TEST_F(WorkdirTest, AWorkdirInsideTheCheckoutResolves) {
  auto d = resolve_workdir(checkout, "kernels", "build.workdir");
  ASSERT_TRUE(d.has_value()) << d.error().to_string();
  EXPECT_EQ(*d, fs::canonical(checkout / "kernels"));
  EXPECT_TRUE(resolve_workdir(checkout, ".", "bench.workdir").has_value());
}

TEST_F(WorkdirTest, ASymlinkOutOfTheCheckoutIsRefused) {
  fs::create_directory_symlink(outside, checkout / "escape");
  auto d = resolve_workdir(checkout, "escape", "build.workdir");
  ASSERT_FALSE(d.has_value());
  EXPECT_THAT(d.error().to_string(), HasSubstr("build.workdir: 'escape' resolves to"));
  EXPECT_THAT(d.error().to_string(), HasSubstr("outside the checkout"));
  // A sibling whose name starts with the checkout's is outside too.
  fs::create_directories(dir / "checkout2");
  fs::create_directory_symlink(dir / "checkout2", checkout / "sibling");
  EXPECT_FALSE(resolve_workdir(checkout, "sibling", "build.workdir").has_value());
}

TEST_F(WorkdirTest, TheBuildDoesNotRunWhenItsWorkdirLeadsOutOrIsMissing) {
  fs::create_directory_symlink(outside, checkout / "escape");
  BuildOutcome b = run_build(manifest("escape", "."), checkout, dir / "logs" / "build.log");
  EXPECT_EQ(b.process.outcome, Outcome::kFailedToStart);
  EXPECT_THAT(b.process.describe(), HasSubstr("build.workdir"));
  EXPECT_FALSE(fs::exists(outside / "built-here"));

  BuildOutcome missing = run_build(manifest("no-such-dir", "."), checkout, dir / "logs" / "build.log");
  EXPECT_EQ(missing.process.outcome, Outcome::kFailedToStart);
  EXPECT_THAT(missing.process.describe(), HasSubstr("build.workdir: 'no-such-dir': no such directory"));
  EXPECT_FALSE(fs::exists(fs::current_path() / "built-here"));

  BuildOutcome ok = run_build(manifest("kernels", "."), checkout, dir / "logs" / "build.log");
  EXPECT_TRUE(ok.ok()) << ok.process.describe();
  EXPECT_TRUE(fs::exists(checkout / "kernels" / "built-here"));
}

// A version 2 manifest may have no build (a Python bench, a script): ok at once.
TEST_F(WorkdirTest, AManifestWithoutABuildHasNothingToBuild) {
  auto m = parse_manifest(json{{"schema_version", 2},
                               {"paths", {"bench.py"}},
                               {"bench", {{"command", "python3 bench.py"}}},
                               {"variants", {{{"name", "base"}, {"params", json::object()}}}},
                               {"sweep", {{"axes", {{"n", {1}}}}}}},
                          "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  BuildOutcome b = run_build(*m, checkout, dir / "logs" / "build.log");
  EXPECT_TRUE(b.ok()) << b.process.describe();
  EXPECT_THAT(testing::read_file(dir / "logs" / "build.log"), HasSubstr("nothing to build"));
}

TEST_F(WorkdirTest, TheBenchDoesNotRunWhenItsWorkdirLeadsOutOrIsMissing) {
  fs::create_directory_symlink(outside, checkout / "escape");
  for (std::string where : {"escape", "no-such-dir"}) {
    Manifest m = manifest(".", where);
    NullSink sink;
    SweepRequest req;
    req.manifest = &m;
    req.checkout = checkout;
    req.stderr_log = dir / "stderr.log";
    SweepResult r = run_sweep(req, sink);
    EXPECT_EQ(r.status, RunStatus::kFailedToStart) << where;
    EXPECT_THAT(r.message, HasSubstr("bench.workdir: '" + where + "'"));
  }
  EXPECT_FALSE(fs::exists(outside / "benched-here"));
  EXPECT_FALSE(fs::exists(fs::current_path() / "benched-here"));
}

}  // namespace
}  // namespace perfwatch::runner
