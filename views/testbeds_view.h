// The testbeds that measured a repo (a machine and backend: a GPU model, a
// Slurm partition, a CPU), with how much each measured. JSON for the API's
// GET /api/v1/testbeds (schemas/api/testbeds.schema.json), which the
// dashboard's testbed picker lists.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::views {

// "repo" as views::resolve_repo says.
Result<nlohmann::json> testbeds_document(store::Database& db, std::optional<store::RepoId> repo);

}  // namespace perfwatch::views
