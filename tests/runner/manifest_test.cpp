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
  EXPECT_EQ(m->points[1].key, "batch=8,dtype=bf16,heads=16,topk=2048");
  EXPECT_EQ(m->points[1].label, "C8");
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
  EXPECT_EQ(m->points.front().axes["batch"], 1);
  EXPECT_EQ(m->points.back().axes["batch"], 96);
  EXPECT_EQ(m->points.back().label, "C96");
  EXPECT_EQ(m->metric.name, "time_us");
  EXPECT_NE(m->find_metric("tokens_per_s"), nullptr);
}

// Version 1 is the generic model with the MLA decode step's axes and metrics.
TEST(Manifest, VersionOneIsTranslatedIntoTheGenericModel) {
  json doc = minimal();
  doc["check"] = {{"max_rel_l2_o", 0.02}};
  doc["metric"] = {{"name", "tokens_per_s"}};
  auto m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->schema_version, 1);
  std::vector<std::string> axes;
  for (const auto& a : m->axes) axes.push_back(a.name);
  EXPECT_EQ(axes, (std::vector<std::string>{"batch", "heads", "topk", "dtype"}));
  EXPECT_EQ(m->label_template, "C{batch}");
  EXPECT_EQ(json(m->points[0].axes).dump(), R"({"batch":1,"dtype":"bf16","heads":16,"topk":2048})");
  ASSERT_EQ(m->metrics.size(), 4u);
  EXPECT_EQ(m->metrics[0].name, "time_us");
  EXPECT_EQ(m->metrics[0].unit, "us");
  EXPECT_EQ(m->metrics[0].direction, Direction::kLowerIsBetter);
  EXPECT_EQ(m->metrics[1].name, "tokens_per_s");
  EXPECT_EQ(m->metrics[1].unit, "tokens/s");
  EXPECT_EQ(m->metrics[1].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(m->metric.name, "tokens_per_s");
  EXPECT_EQ(m->metric.direction, Direction::kHigherIsBetter);
  // Its check is the bench's params, as its plan carried them: defaults filled in.
  EXPECT_EQ(m->bench.params, json({{"max_rel_l2_o", 0.02}, {"max_abs_lse", 0.001}, {"masked_fraction", 0.1}}));
  EXPECT_TRUE(m->bench.adapter.empty());

  // Two heads: "C1" would name two points, so the label names what varies.
  doc["sweep"] = {{"batch", {1, 8}}, {"heads", {16, 128}}};
  m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->points[3].label, "batch=8,heads=128");
  EXPECT_EQ(m->points[3].id, "b8_h128_k2048_bf16");
}

json minimal_v2() {
  return json::parse(R"({
    "schema_version": 2,
    "paths": ["bench.py"],
    "bench": {"command": "python3 bench.py", "params": {"tolerance": {"rel_l2": 0.01}}},
    "variants": [{"name": "bt32", "baseline": true, "params": {"block_t": 32}},
                 {"name": "bt64", "params": {"block_t": 64}}],
    "sweep": {"axes": {"batch": [1, 48], "dtype": ["bf16", "fp8"]}, "label": "C{batch}-{dtype}"},
    "metrics": [{"name": "tokens_per_s", "unit": "tokens/s", "direction": "higher_is_better"},
                {"name": "time_us", "unit": "us", "direction": "lower_is_better", "description": "per call"}]
  })");
}

TEST(Manifest, VersionTwoDeclaresAxesLabelsAndMetrics) {
  auto m = parse_manifest(minimal_v2(), "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->schema_version, 2);
  EXPECT_TRUE(m->build.command.empty()) << "build is optional in version 2";
  ASSERT_EQ(m->points.size(), 4u);
  // The first axis varies fastest; the label is the template's; the key sorts names.
  EXPECT_EQ(m->points[0].label, "C1-bf16");
  EXPECT_EQ(m->points[1].label, "C48-bf16");
  EXPECT_EQ(m->points[2].label, "C1-fp8");
  EXPECT_EQ(m->points[1].key, "batch=48,dtype=bf16");
  EXPECT_EQ(m->points[1].id, "C48-bf16") << "version 2 names a point by its label";
  EXPECT_EQ(m->metric.name, "tokens_per_s") << "the first declared metric judges by default";
  EXPECT_EQ(m->metric.direction, Direction::kHigherIsBetter);
  ASSERT_EQ(m->metrics.size(), 2u);
  EXPECT_EQ(m->metrics[1].description, "per call");
  EXPECT_EQ(m->bench.params, json({{"tolerance", {{"rel_l2", 0.01}}}}));

  json doc = minimal_v2();
  doc["metric"] = "time_us";
  doc["bench"]["adapter"] = "command";
  doc["sweep"].erase("label");
  m = parse_manifest(doc, "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->metric.name, "time_us");
  EXPECT_EQ(m->metric.direction, Direction::kLowerIsBetter);
  EXPECT_EQ(m->bench.adapter, "command");
  EXPECT_EQ(m->bench.source["adapter"], "command");
  EXPECT_EQ(m->points[1].label, "batch=48,dtype=bf16") << "the default label names every axis that varies";
}

TEST(Manifest, VersionTwoKeepsTheAxisOrderAsWritten) {
  auto m = parse_manifest_text(R"({"schema_version": 2, "paths": ["b"], "bench": {"command": "b"},
      "variants": [{"name": "v", "params": {}}],
      "sweep": {"axes": {"seq_len": [4096, 32768], "batch": [1, 8]}}})", "perfwatch.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->axes[0].name, "seq_len");
  EXPECT_EQ(m->points[0].label, "seq_len=4096,batch=1");
  EXPECT_EQ(m->points[1].label, "seq_len=32768,batch=1") << "the first axis as written varies fastest";
  EXPECT_EQ(m->points[1].key, "batch=1,seq_len=32768");
  EXPECT_EQ(m->metric.name, "time_us") << "the default metric";

  // One point: the default label names every axis.
  m = parse_manifest_text(R"({"schema_version": 2, "paths": ["b"], "bench": {"command": "b"},
      "variants": [{"name": "v", "params": {}}], "sweep": {"axes": {"n": [0.5], "mode": ["fast"]}}})", "m.json");
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ(m->points[0].label, "n=0.5,mode=fast");
  EXPECT_EQ(m->points[0].key, "mode=fast,n=0.5");

  auto broken = parse_manifest_text("{\"schema_version\": 2,", "perfwatch.json");
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().where, "perfwatch.json");
}

TEST(Manifest, VersionTwoErrorsNameTheField) {
  json doc = minimal_v2();
  doc["sweep"]["label"] = "C{conc}";
  EXPECT_EQ(error_of(doc), "perfwatch.json: sweep.label: names axis 'conc' that the sweep does not have");

  doc = minimal_v2();
  doc["sweep"]["label"] = "C{batch}";
  EXPECT_EQ(error_of(doc), "perfwatch.json: sweep.label: 'C{batch}' gives two points the label 'C1' "
                           "(batch=1,dtype=bf16 and batch=1,dtype=fp8); name every axis that varies");

  doc = minimal_v2();
  doc["sweep"]["label"] = "C{batch";
  EXPECT_EQ(error_of(doc), "perfwatch.json: sweep.label: 'C{batch': a '{' is never closed");

  doc = minimal_v2();
  doc["metric"] = "bytes_per_s";
  EXPECT_EQ(error_of(doc), "perfwatch.json: metric: 'bytes_per_s' is not one of the declared metrics (tokens_per_s, time_us)");

  doc = minimal_v2();
  doc["metrics"].push_back({{"name", "time_us"}, {"unit", "ms"}, {"direction", "lower_is_better"}});
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: metrics[2].name: 'time_us' is declared by an earlier metric", 0), 0u) << error_of(doc);

  doc = minimal_v2();
  doc["sweep"]["axes"]["dtype"] = {"bf16", "a,b"};
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: sweep.axes.dtype[1]: 'a,b'", 0), 0u) << error_of(doc);

  doc = minimal_v2();
  doc["sweep"]["axes"]["batch"] = {1, 1};
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: sweep: point batch=1,dtype=bf16 appears twice", 0), 0u) << error_of(doc);

  doc = minimal_v2();
  doc["sweep"]["axes"]["batch"] = {true};
  EXPECT_EQ(error_of(doc).rfind("perfwatch.json: sweep.axes.batch[0]", 0), 0u) << error_of(doc);
}

}  // namespace
}  // namespace perfwatch::runner
