#include "views/testbeds_view.h"

#include "store/web_queries.h"
#include "views/fragments.h"
#include "views/lookup.h"

namespace perfwatch::views {

using nlohmann::json;

Result<json> testbeds_document(store::Database& db, std::optional<store::RepoId> repo_id) {
  auto repo = resolve_repo(db, repo_id);
  if (!repo) return fail(repo.error());
  auto seen = store::WebReader(db).testbeds_of_repo(repo->id);
  if (!seen) return fail(seen.error());
  json list = json::array();
  for (const auto& t : *seen) {
    json entry = testbed_json(t.testbed);
    entry["runs"] = t.runs;
    entry["commits"] = t.commits;
    entry["last_run_at"] = t.last_run_at ? json(*t.last_run_at) : json(nullptr);
    list.push_back(std::move(entry));
  }
  return json{{"schema_version", kSchemaVersion}, {"repo_id", repo->id}, {"testbeds", std::move(list)}};
}

}  // namespace perfwatch::views
