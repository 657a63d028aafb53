#include "daemon/event_log.h"

#include <gtest/gtest.h>

#include <regex>

namespace perfwatch::daemon {
namespace {

TEST(EventLogTest, OneLinePerEventWithTimeCommitStepThenFields) {
  std::vector<std::string> lines;
  EventLog log([&](std::string_view l) { lines.emplace_back(l); });
  log.event("build").commit("3f2a9c1e05aa77").add("status", "ok").add("wall_s", 42.1);
  log.event("run").add("message", "the bench \"crashed\" = bad").add("trials", 12);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(std::regex_match(lines[0], std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ commit=3f2a9c1e05 step=build status=ok wall_s=42.1)")))
      << lines[0];
  EXPECT_NE(lines[1].find(R"(step=run message="the bench \"crashed\" = bad" trials=12)"), std::string::npos) << lines[1];
}

TEST(EventLogTest, QuotesWhatWouldBreakTheSplit) {
  EXPECT_EQ(EventLog::quote("plain"), "plain");
  EXPECT_EQ(EventLog::quote(""), "\"\"");
  EXPECT_EQ(EventLog::quote("a b"), "\"a b\"");
  EXPECT_EQ(EventLog::quote("x=1"), "\"x=1\"");
  EXPECT_EQ(EventLog::quote("line\nbreak"), "\"line\\nbreak\"");
}

}  // namespace
}  // namespace perfwatch::daemon
