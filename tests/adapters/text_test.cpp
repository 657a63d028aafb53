// The adapters' text helpers (adapters/text.h).
#include <gtest/gtest.h>

#include "adapters/text.h"

namespace perfwatch::adapters {
namespace {

TEST(Text, NumbersAreReadWholeAndFinite) {
  EXPECT_EQ(parse_number("1234.5"), 1234.5);
  EXPECT_EQ(parse_number(" 1.2e+06\n"), 1.2e6);
  EXPECT_EQ(parse_number("-3"), -3);
  for (const char* bad : {"", "fast", "1,234", "12 tokens", "nan", "inf", "0x10", "1e999"})
    EXPECT_FALSE(parse_number(bad)) << bad;
}

TEST(Text, NearestNamesByEditDistance) {
  std::vector<std::string> names = {"BM_decode<16>/1/real_time", "BM_decode<16>/8/real_time", "BM_decode<32>/1/real_time",
                                    "BM_copy/1024"};
  auto near = nearest(names, "BM_decode<16>/1");
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near[0], "BM_decode<16>/1/real_time");
  EXPECT_TRUE(nearest(names, "completely_different_name_here").empty());
  EXPECT_EQ(quote_list({}), "none");
  EXPECT_EQ(quote_list({"a", "b"}), "'a', 'b'");
}

TEST(Text, LinesAndTails) {
  EXPECT_EQ(last_line("a\nb\r\n\n  \n"), "b");
  EXPECT_EQ(last_line(""), "");
  EXPECT_EQ(tail_lines("1\n2\n3\n4\n5\n6\n7\n", 3), "5 | 6 | 7");
  EXPECT_EQ(split_lines("x\ny").size(), 2u);
  EXPECT_EQ(quote(std::string(300, 'a'), 10), "'aaaaaaaaaa...'");
  EXPECT_EQ(split_words("  ./bench  --a 1\t--b "), (std::vector<std::string>{"./bench", "--a", "1", "--b"}));
}

}  // namespace
}  // namespace perfwatch::adapters
