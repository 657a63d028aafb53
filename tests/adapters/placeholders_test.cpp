// The manifest's templates (adapters/placeholders.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/placeholders.h"

namespace perfwatch::adapters {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const Variant kVariant{"w8", {{"num_warps", 8}, {"target_ctas", 132}, {"fast", true}, {"ratio", 0.5}}};
const Point kPoint{"C48", {{"batch", 48}, {"dtype", "bf16"}, {"scale", 1.25}}};

std::string expanded(std::string_view text, Quoting q = Quoting::kNone) {
  auto r = expand(text, kVariant, kPoint, "bench.command", q);
  return r ? *r : "error: " + r.error().to_string();
}

TEST(Placeholders, AxesParamsAndTheVariantName) {
  EXPECT_EQ(expanded("./serve --conc {batch} --dtype {dtype} --ctas {target_ctas}"),
            "./serve --conc 48 --dtype bf16 --ctas 132");
  EXPECT_EQ(expanded("BM_decode<{num_warps}>/{batch}/{variant}"), "BM_decode<8>/48/w8");
  EXPECT_EQ(expanded("{fast} {ratio} {scale}"), "true 0.5 1.25");
}

TEST(Placeholders, LiteralBracesAndShellVariablesPassThrough) {
  EXPECT_EQ(expanded("awk '{{print $1}}' ${HOME}/x {batch}"), "awk '{print $1}' ${HOME}/x 48");
}

TEST(Placeholders, MistakesAreErrorsThatSayWhatToWrite) {
  EXPECT_THAT(expanded("--conc {concurrency}"),
              HasSubstr("bench.command: {concurrency} names no axis of point 'C48' and no param of variant 'w8'"));
  EXPECT_THAT(expanded("awk '{print $1}'"), HasSubstr("'{print $1}' is not a placeholder"));
  EXPECT_THAT(expanded("--conc {batch"), HasSubstr("never closed (write {{ for a literal brace)"));
  EXPECT_THAT(expanded("x }"), HasSubstr("a lone '}'"));
  Variant clash{"v", {{"batch", 4}}};
  auto r = expand("{batch}", clash, kPoint, "bench.command");
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("both an axis and a param"));
}

TEST(Placeholders, ShellQuotingRefusesValuesTheShellWouldInterpret) {
  Point odd{"p", {{"model", "llama 70b"}, {"path", "/data/m-1.5b:v2"}}};
  auto ok = expand("--model {path}", kVariant, odd, "bench.command", Quoting::kShell);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, "--model /data/m-1.5b:v2");
  auto bad = expand("--model {model}", kVariant, odd, "bench.command", Quoting::kShell);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("the value 'llama 70b' of axis model"));
  EXPECT_TRUE(expand("{model}", kVariant, odd, "bench.env.MODEL"));
}

TEST(Placeholders, UnusedParamsAreTheOnesNoTemplateNames) {
  EXPECT_EQ(unused_params(kVariant, {"--ctas {target_ctas}", "{ratio}"}), (std::vector<std::string>{"fast", "num_warps"}));
  auto names = placeholders("{a} {b} {a} {{x}}", "w");
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace perfwatch::adapters
