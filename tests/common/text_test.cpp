// Text from outside: ill-formed UTF-8 becomes U+FFFD (checked against the
// Unicode Standard's examples of maximal subparts), control characters are
// escaped for a terminal, and JSON text never throws.
#include "common/text.h"

#include <gtest/gtest.h>

namespace perfwatch {
namespace {

const std::string kR = "\xEF\xBF\xBD";  // U+FFFD

TEST(ValidUtf8, WellFormedTextIsUnchanged) {
  for (std::string s : {std::string(""), std::string("plain ascii"), std::string("Ren\xC3\xA9 M\xC3\xBCller"),
                        std::string("\xE2\x82\xAC 5"), std::string("\xF0\x9F\x9A\x80"), std::string("a\0b", 3)}) {
    EXPECT_TRUE(is_valid_utf8(s)) << s;
    EXPECT_EQ(valid_utf8(s), s);
  }
}

TEST(ValidUtf8, Latin1BytesBecomeReplacementCharacters) {
  EXPECT_FALSE(is_valid_utf8("Ren\xE9"));
  EXPECT_EQ(valid_utf8("Ren\xE9 M\xFCller"), "Ren" + kR + " M" + kR + "ller");
}

TEST(ValidUtf8, OneReplacementPerMaximalSubpart) {
  // The Unicode Standard, chapter 3, "U+FFFD Substitution of Maximal Subparts".
  EXPECT_EQ(valid_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "a" + kR + kR + kR + "b" + kR + "c" + kR + kR + "d");
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kR + kR);              // overlong '/'
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), kR + kR + kR);     // overlong, 3 bytes
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kR + kR + kR);     // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), kR + kR + kR + kR);  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xE2\x82"), kR);                   // truncated at the end
  EXPECT_EQ(valid_utf8("\xFF"), kR);
}

TEST(TerminalSafe, ControlCharactersAreShownNotObeyed) {
  EXPECT_EQ(terminal_safe("fix \x1b[2J\x1b]0;owned\x07 tiles"), "fix \\x1b[2J\\x1b]0;owned\\x07 tiles");
  EXPECT_EQ(terminal_safe("a\rb\x7f"), "a\\x0db\\x7f");
  EXPECT_EQ(terminal_safe("csi \xC2\x9B" "2J"), "csi \\u009b2J");  // C1 CSI
  EXPECT_EQ(terminal_safe("lines\n\tand tabs stay"), "lines\n\tand tabs stay");
  EXPECT_EQ(terminal_safe("Ren\xC3\xA9 \xE9"), "Ren\xC3\xA9 " + kR);
}

TEST(JsonText, InvalidUtf8IsReplacedInsteadOfThrowing) {
  nlohmann::json doc = {{"subject", "Ren\xE9"}, {"n", 1}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);  // what json_text exists for
  EXPECT_EQ(json_text(doc), "{\"n\":1,\"subject\":\"Ren" + kR + "\"}");
  EXPECT_EQ(json_text(doc, 2), "{\n  \"n\": 1,\n  \"subject\": \"Ren" + kR + "\"\n}");
  EXPECT_EQ(json_text(nlohmann::json("\x1b")), "\"\\u001b\"");
}

}  // namespace
}  // namespace perfwatch
