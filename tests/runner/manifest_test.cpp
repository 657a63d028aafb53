#include "runner/manifest.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace perfwatch::runner {
namespace {

using nlohmann::json;

json minimal() {
  return json::parse(R"({
    "schema_version": 1,
    "build": {"command": "make"},
    "paths": ["kernels/"],
    "bench": {"command": "./bench"},
    "variants": [{"name": "base", "params": {"block_t": 32}}],
    "sweep": {"batch": [1, 8]}
  })");
}

std::string error_of(const json& doc) {
  auto m = parse_manifest(doc, "perfwatch.json");
  EXPECT_FALSE(m.has_value());
  return m ? "" : m.error().to_string();
}

TEST(Manifest, DefaultsFillWhatIsLeftOut) {
  auto m = parse_manifest(minimal(), "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->variants.size(), 1u);
  EXPECT_TRUE(m->variants[0].baseline) << "a lone variant is the baseline";
  ASSERT_EQ(m->points.size(), 2u);
  EXPECT_EQ(m->points[0].id, "b1_h16_k2048_bf16");
  EXPECT_EQ(m->points[1].id, "b8_h16_k2048_bf16");
  EXPECT_EQ(m->trials.min, 5);
  EXPECT_EQ(m->trials.max, 30);
  EXPECT_DOUBLE_EQ(m->default_band, 0.05);
  EXPECT_EQ(m->runs.per_commit, 3);
  EXPECT_EQ(m->metric.name, "time_us");
  EXPECT_EQ(m->metric.direction, Direction::kLowerIsBetter);
  EXPECT_EQ(m->build.workdir, ".");
}

TEST(Manifest, SweepIsTheCartesianProductWithBatchFastest) {
  json doc = minimal();
  doc["sweep"] = {{"batch", {1, 96}}, {"heads", {16, 128}}, {"topk", {2048}}};
  auto m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value());
  std::vector<std::string> ids;
  for (const auto& p : m->points) ids.push_back(p.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"b1_h16_k2048_bf16", "b96_h16_k2048_bf16", "b1_h128_k2048_bf16", "b96_h128_k2048_bf16"}));
}

TEST(Manifest, BadFieldsAreNamed) {
  json doc = minimal();
  doc["sweep"]["batch"] = {1, 8, -3};
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: sweep.batch[2]", 0), 0u) << error_of(doc);

  doc = minimal();
  doc["build"].erase("command");
  EXPECT_NE(error_of(doc).find("build"), std::string::npos) << error_of(doc);
  EXPECT_NE(error_of(doc).find("command"), std::string::npos) << error_of(doc);

  doc = minimal();
  doc["trials"] = {{"min", 10}, {"max", 5}};
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: trials.min", 0), 0u) << error_of(doc);

  doc = minimal();
  doc["variants"][0]["params"]["num_warps"] = "eight";
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: variants[0].params.num_warps", 0), 0u) << error_of(doc);

  doc = minimal();
  doc["bogus"] = 1;
  EXPECT_NE(error_of(doc).find("bogus"), std::string::npos) << error_of(doc);
}

// Numbers the schema lets through must still fit what perfwatch does with them.
TEST(Manifest, HugeNumbersAreRangeCheckedOrMeanNoLimit) {
  json doc = minimal();
  doc["trials"] = {{"min", 1}, {"max", 1000000000000LL}};
  EXPECT_EQ(error_of(doc), "perfwatch.json: trials.max: 1000000000000 is out of range (at most 2147483647)");
  doc = minimal();
  doc["runs"] = {{"max_per_commit", 3e10}};
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: runs.max_per_commit: ", 0), 0u) << error_of(doc);
  doc = minimal();
  doc["bench"]["threads"] = 4294967296LL;
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: bench.threads: ", 0), 0u) << error_of(doc);

  // A timeout too long for any clock is accepted: it means "no limit" (process.h).
  doc = minimal();
  doc["build"]["timeout_s"] = 1e300;
  doc["bench"]["timeout_s"] = 1e300;
  doc["bench"]["idle_timeout_s"] = 1e300;
  auto m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->bench.timeout_s, 1e300);
}

TEST(Manifest, ExactlyOneBaselineAmongSeveralVariants) {
  json doc = minimal();
  doc["variants"].push_back({{"name", "wide"}, {"params", {{"num_warps", 8}}}});
  EXPECT_EQ(error_of(doc), "perfwatch.json: variants: mark one variant with \"baseline\": true");

  doc["variants"][0]["baseline"] = true;
  doc["variants"][1]["baseline"] = true;
  EXPECT_EQ(error_of(doc), "perfwatch.json: variants[1].baseline: only one variant can be the baseline");

  doc["variants"][1]["baseline"] = false;
  auto m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->baseline().name, "base");
}

TEST(Manifest, VariantNamesAreUnique) {
  json doc = minimal();
  doc["variants"].push_back({{"name", "base"}, {"params", json::object()}});
  EXPECT_NE(error_of(doc).find("variants[1].name"), std::string::npos) << error_of(doc);
}

TEST(Manifest, MetricDirectionMustMatchTheMetric) {
  json doc = minimal();
  doc["metric"] = {{"name", "time_us"}, {"direction", "higher_is_better"}};
  EXPECT_EQ(error_of(doc), "perfwatch.json: metric.direction: time_us is lower_is_better");
  doc["metric"] = {{"name", "tokens_per_s"}};
  auto m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->metric.direction, Direction::kHigherIsBetter);
}

TEST(Manifest, FileErrorsNameTheFile) {
  testing::TempDir dir;
  auto missing = load_manifest(dir / "nope.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().where, (dir / "nope.json").string());

  testing::write_file(dir / "broken.json", "{\"schema_version\": 1,");
  auto broken = load_manifest(dir / "broken.json");
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().where, (dir / "broken.json").string());
  EXPECT_NE(broken.error().message.find("not valid JSON"), std::string::npos);
}

TEST(Manifest, TheShippedManifestIsValid) {
  auto m = load_manifest(std::filesystem::path(PERFWATCH_SOURCE_DIR) / "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->points.size(), 6u);
  EXPECT_EQ(m->points.front().batch, 1);
  EXPECT_EQ(m->points.back().batch, 96);
}

}  // namespace
}  // namespace perfwatch::runner
