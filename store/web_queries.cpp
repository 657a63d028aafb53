#include "store/web_queries.h"

#include <algorithm>

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;

Result<std::vector<VariantSeen>> WebReader::variants_of_repo(RepoId repo) {
  return guard(db_, "list the variants of repo " + std::to_string(repo), [&] {
    // The newest run of each name gives its params and baseline flag; the
    // bare max(v.id) column takes its row's other columns (SQLite's rule
    // for a single max() aggregate).
    Query q(db_,
            "SELECT v.name AS name, v.params_json AS params_json, v.is_baseline AS is_baseline, "
            "  max(v.id) AS newest, count(*) AS runs "
            "FROM run_variants v JOIN runs r ON r.id = v.run_id JOIN commits c ON c.id = r.commit_id "
            "WHERE c.repo_id = :repo GROUP BY v.name");
    q->bind(":repo", repo);
    std::vector<VariantSeen> out;
    while (q->step()) {
      VariantSeen v;
      v.name = q->get<std::string>("name");
      v.params = q->get<nlohmann::json>("params_json");
      v.is_baseline = q->get<bool>("is_baseline");
      v.runs = q->get<std::int64_t>("runs");
      out.push_back(std::move(v));
    }
    std::stable_sort(out.begin(), out.end(), [](const VariantSeen& a, const VariantSeen& b) {
      if (a.is_baseline != b.is_baseline) return a.is_baseline;
      return a.name < b.name;
    });
    return out;
  });
}

Result<std::vector<PointRecord>> WebReader::points_of_repo(RepoId repo) {
  return guard(db_, "list the points of repo " + std::to_string(repo), [&] {
    // Points are few (tens); each is checked for a commit summary of the
    // repo, or else a run summary, through the tables' primary keys.
    Query q(db_, std::string("SELECT ") + detail::kPointColumns +
                     " FROM points p WHERE EXISTS (SELECT 1 FROM commit_summaries cs JOIN commits c "
                     "  ON c.id = cs.commit_id WHERE cs.point_id = p.id AND c.repo_id = :repo) "
                     "OR EXISTS (SELECT 1 FROM summaries s JOIN runs r ON r.id = s.run_id "
                     "  JOIN commits c ON c.id = r.commit_id WHERE s.point_id = p.id AND c.repo_id = :repo) "
                     "ORDER BY p.id");
    q->bind(":repo", repo);
    std::vector<PointRecord> out;
    while (q->step()) out.push_back(detail::read_point(*q));
    return out;
  });
}

}  // namespace perfwatch::store
