// The JSON printer the history document is written with: what it writes is
// what nlohmann reads back, strings escaped as the server's dump escapes them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "views/json_writer.h"

namespace perfwatch::views {
namespace {

TEST(JsonWriter, WritesWhatNlohmannReadsBack) {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("s").value("a \"quoted\" \\ back\nslash\t\x01 <script>alert(1)</script>");
  w.key("d").value(12.0).key("e").value(0.1).key("big").value(1.5e300).key("inf").value(1.0 / 0.0);
  w.key("i").value(std::int64_t{-42}).key("b").value(true).key("n").null();
  w.key("opt").value(std::optional<double>{}).key("arr").begin_array().value(1).value("x").begin_object().end_object().end_array();
  w.key("sub").value(nlohmann::json{{"k", {1, 2}}});
  w.end_object();
  auto doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["s"], "a \"quoted\" \\ back\nslash\t\x01 <script>alert(1)</script>");
  EXPECT_TRUE(doc["d"].is_number_float());
  EXPECT_EQ(doc["d"], 12.0);
  EXPECT_EQ(doc["e"], 0.1);
  EXPECT_EQ(doc["big"], 1.5e300);
  EXPECT_TRUE(doc["inf"].is_null());
  EXPECT_EQ(doc["i"], -42);
  EXPECT_EQ(doc["b"], true);
  EXPECT_TRUE(doc["n"].is_null());
  EXPECT_TRUE(doc["opt"].is_null());
  EXPECT_EQ(doc["arr"], nlohmann::json::parse(R"([1,"x",{}])"));
  EXPECT_EQ(doc["sub"]["k"][1], 2);
}

TEST(JsonWriter, EscapesLikeTheServersDump) {
  // Valid multi-byte UTF-8 passes through; every invalid byte becomes U+FFFD.
  for (std::string text : {std::string("Grüße, 東京, 🚀"), std::string("bad \xff byte"), std::string("cut \xe6\x9d"),
                           std::string("overlong \xc0\xaf"), std::string("surrogate \xed\xa0\x80"),
                           std::string("ctl \x1f\x7f end"), std::string("cut4 \xf0\x9f\x9a!"),
                           std::string("overlong3 \xe0\x80\x80"), std::string("too big \xf4\x90\x80\x80"),
                           std::string("lone \x80\xbf cont"), std::string("end \xc3")}) {
    std::string ours;
    append_json_string(ours, text);
    std::string theirs = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    EXPECT_EQ(nlohmann::json::parse(ours), nlohmann::json::parse(theirs)) << ours << " vs " << theirs;
  }
}

}  // namespace
}  // namespace perfwatch::views
