#include "schemas/schema.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace perfwatch::schemas
