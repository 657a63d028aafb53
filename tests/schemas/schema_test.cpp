#include "schemas/schema.h"

#include <gtest/gtest.h>

#include "schemas/manifest_defaults.h"

namespace perfwatch::schemas {
namespace {

using nlohmann::json;

TEST(Schemas, EveryEmbeddedSchemaCompiles) {
  int count = 0;
  for (const auto& path : paths()) {
    if (!path.ends_with(".schema.json")) continue;
    auto schema = Schema::load(path);
    EXPECT_TRUE(schema.has_value()) << path << ": " << schema.error().to_string();
    ++count;
  }
  EXPECT_GT(count, 5);
}

TEST(Schemas, MissingSchemaIsNotFound) {
  auto schema = Schema::load("bench/nope.schema.json");
  ASSERT_FALSE(schema.has_value());
  EXPECT_EQ(schema.error().code, ErrorCode::kNotFound);
}

TEST(Schemas, ErrorNamesTheFieldThroughAReferenceToAnotherFile) {
  auto schema = Schema::load("bench/plan.schema.json");
  ASSERT_TRUE(schema.has_value()) << schema.error().to_string();
  json plan = {{"kind", "plan"},
               {"schema_version", 1},
               {"variants", {{{"name", "base"}, {"params", {{"block_t", 32}}}}}},
               {"points", {{{"id", "b1"}, {"batch", 1}, {"heads", 16}, {"topk", 2048}},
                           {{"id", "b8"}, {"batch", -8}, {"heads", 16}, {"topk", 2048}}}}};
  auto status = schema->validate(plan, "plan");
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(status.error().where, "plan: points[1].batch");

  plan["points"][1]["batch"] = 8;
  EXPECT_TRUE(schema->validate(plan, "plan").has_value());
}

TEST(Schemas, ConditionalRequirementIsEnforced) {
  auto schema = Schema::load("bench/variant.schema.json");
  ASSERT_TRUE(schema.has_value());
  json line = {{"kind", "variant"}, {"variant", "v"}, {"params", json::object()}, {"status", "infeasible"}};
  EXPECT_FALSE(schema->validate(line, "line 2").has_value());
  line["reason"] = "needs 240 KB of shared memory, the device allows 227 KB";
  EXPECT_TRUE(schema->validate(line, "line 2").has_value());
}

// The defaults the code reads from schemas/manifest_defaults.h are the ones
// the manifest schemas declare: one value, written down twice on purpose
// (for people in the schema, for the compiler in the header), checked here.
TEST(Schemas, ManifestDefaultsAgreeWithTheSchemas) {
  for (const char* path : {"manifest.schema.json", "manifest.v2.schema.json"}) {
    auto text = file(path);
    ASSERT_TRUE(text.has_value()) << path;
    const json doc = json::parse(*text);
    const json& p = doc["properties"];
    EXPECT_EQ(p["noise"]["properties"]["default_band"]["default"].get<double>(), kDefaultBandRel) << path;
    EXPECT_EQ(p["runs"]["properties"]["per_commit"]["default"].get<int>(), kDefaultRunsPerCommit) << path;
    EXPECT_EQ(p["runs"]["properties"]["max_per_commit"]["default"].get<int>(), kDefaultMaxRunsPerCommit) << path;
  }
  const json v1 = json::parse(*file("manifest.schema.json"));
  EXPECT_EQ(v1["properties"]["metric"]["properties"]["name"]["default"].get<std::string>(), kDefaultMetric);
  const json v2 = json::parse(*file("manifest.v2.schema.json"));
  EXPECT_EQ(v2["properties"]["metrics"]["default"][0]["name"].get<std::string>(), kDefaultMetric);
}

}  // namespace
}  // namespace perfwatch::schemas
