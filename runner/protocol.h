// The bench protocol of schemas/bench/: the plan and measure requests the
// runner writes, and the lines it reads back, each validated against its
// schema before anything is stored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "runner/manifest.h"
#include "schemas/schema.h"

namespace perfwatch::runner {

enum class LineKind { kHeader, kVariant, kCheck, kTrial, kSkipped, kFooter, kError };
const char* to_string(LineKind kind);

struct BenchLine {
  LineKind kind;
  nlohmann::json doc;
};

class Protocol {
 public:
  // Compiles the schemas of every line kind and of the plan.
  static Result<Protocol> load();

  // Parses one stdout line. A protocol error names the line number and the
  // field: "bench stdout line 14: time_us: must be > 0".
  Result<BenchLine> parse(std::string_view text, int line_no) const;

  // The plan for a run of these points, validated against its schema.
  Result<nlohmann::json> make_plan(const Manifest& manifest, const std::vector<PointSpec>& points,
                                   std::uint64_t seed) const;

  static nlohmann::json measure_request(const std::string& variant, const std::string& point, int trials);

 private:
  Protocol() = default;
  std::vector<std::pair<LineKind, schemas::Schema>> lines_;
  std::vector<schemas::Schema> plan_;  // one element; a vector only because Schema has no default state
};

}  // namespace perfwatch::runner
