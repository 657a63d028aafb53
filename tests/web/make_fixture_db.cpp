// perfwatch_web_fixture DB: fills a new database with the web tests' story
// (fixture_builder.h), on two testbeds, and prints what it made as JSON on stdout. The browser
// test runs it before starting `perfwatch serve` on the file.
#include <cstdio>
#include <iostream>
#include <string>

#include "fixture_builder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s NEW_DATABASE_FILE\n", argv[0]);
    return 2;
  }
  // Two testbeds, so that the dashboard's testbed picker and its "same
  // commit on every testbed" view have something to show.
  perfwatch::web::testing::FixtureSpec spec;
  spec.second_testbed = true;
  auto info = perfwatch::web::testing::build_fixture(argv[1], spec);
  if (!info) {
    std::fprintf(stderr, "perfwatch_web_fixture: %s\n", info.error().to_string().c_str());
    return 1;
  }
  std::cout << info->to_json().dump(2) << std::endl;
  return 0;
}
