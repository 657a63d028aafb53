// Flags: a filtered list (the API's GET /api/v1/flags, `perfwatch flags
// --json`, `perfwatch query flags --json`; schemas/api/flags.schema.json)
// and one flag with the comparison that raised it (GET /api/v1/flags/{id};
// schemas/api/flag.schema.json). One model each, printed as JSON or text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/analysis_store.h"
#include "store/database.h"

namespace perfwatch::views {

struct FlagsRequest {
  std::optional<store::RepoId> repo;  // only this repo's flags
  store::FlagState state = store::FlagState::kOpen;
  std::optional<store::FlagKind> kind;
  std::optional<std::string> variant;
  std::optional<std::string> point;   // a point key
  std::optional<std::string> commit;  // a sha or unique prefix, in `repo` (default: the only repo)
  std::optional<store::TestbedId> testbed;
  int limit = 100;                    // newest first, 1..kFlagsLimitMax
  int offset = 0;
};
inline constexpr int kFlagsLimitMax = 500;

struct FlagsView {
  store::FlagState state = store::FlagState::kOpen;
  int limit = 0;
  int offset = 0;
  bool has_more = false;
  std::vector<store::FlagView> flags;
  std::map<store::PointId, std::string> labels;  // the users' point labels ("C64")
};

// "open", "acknowledged", "withdrawn", "any"
std::string_view to_string(store::FlagState state);

// kInvalidArgument "point" for an unknown point key, "limit"/"offset" out of
// range; "commit" and "repo" as views::resolve_* say.
Result<FlagsView> flags_view(store::Database& db, const FlagsRequest& request);
nlohmann::json flags_document(const FlagsView& view);
// One line per flag: id, kind, commit, variant, point, delta, band, p, state, subject.
std::string flags_text(const FlagsView& view);

struct FlagDetail {
  store::FlagView flag;
  store::PointRecord point;
  std::optional<store::ComparisonRecord> comparison;  // the one that raised it, when it still exists
  std::optional<store::CommitRecord> against;         // the commit it compared with
};

// kNotFound "flag" for an unknown id.
Result<FlagDetail> flag_view(store::Database& db, store::FlagId id);
nlohmann::json flag_document(const FlagDetail& view);

}  // namespace perfwatch::views
