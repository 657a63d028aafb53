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

Result<std::vector<TestbedSeen>> WebReader::testbeds_of_repo(RepoId repo) {
  return guard(db_, "list the testbeds of repo " + std::to_string(repo), [&] {
    Query q(db_,
            "SELECT t.id AS id, t.name AS name, t.hostname AS hostname, t.backend AS backend, "
            "  t.device_name AS device_name, t.created_at AS created_at, count(r.id) AS runs, "
            "  count(DISTINCT CASE WHEN r.status = 'ok' THEN r.commit_id END) AS commits, "
            "  max(r.started_at) AS last_run_at "
            "FROM testbeds t JOIN runs r ON r.testbed_id = t.id JOIN commits c ON c.id = r.commit_id "
            "WHERE c.repo_id = :repo GROUP BY t.id ORDER BY t.id");
    q->bind(":repo", repo);
    std::vector<TestbedSeen> out;
    while (q->step()) {
      TestbedSeen t;
      t.testbed.id = q->get<TestbedId>("id");
      t.testbed.name = q->get<std::string>("name");
      t.testbed.hostname = q->get<std::string>("hostname");
      t.testbed.backend = detail::read_enum(*q, "backend", parse_backend);
      t.testbed.device_name = q->get<std::string>("device_name");
      t.testbed.created_at = q->get<UnixSeconds>("created_at");
      t.runs = q->get<std::int64_t>("runs");
      t.commits = q->get<std::int64_t>("commits");
      t.last_run_at = q->get<std::optional<UnixSeconds>>("last_run_at");
      out.push_back(std::move(t));
    }
    return out;
  });
}

Result<std::vector<LatestPointValue>> WebReader::latest_point_values(int limit) {
  return guard(db_, "read the newest value of every cell", [&] {
    Transaction snapshot(db_, Transaction::Mode::kDeferred);
    detail::check(snapshot.status());
    // Per repo x testbed, the newest commit with pooled values: every
    // process of a commit measures every point, so its cells are the
    // sweep's. Few repos and testbeds; each look is an index seek, where one
    // pass over every commit's values took 0.1 -- 0.25 s at 1,000 commits.
    Query pairs(db_, "SELECT r.id AS repo_id, t.id AS testbed_id FROM repos r, testbeds t ORDER BY r.name, t.name");
    std::vector<std::pair<RepoId, TestbedId>> todo;
    while (pairs->step()) todo.emplace_back(pairs->get<RepoId>("repo_id"), pairs->get<TestbedId>("testbed_id"));
    std::vector<LatestPointValue> out;
    for (auto [repo, testbed] : todo) {
      Query newest(db_,
                   "SELECT c.id AS id FROM commits c WHERE c.repo_id = :repo AND EXISTS ("
                   "  SELECT 1 FROM commit_summaries cs WHERE cs.commit_id = c.id AND cs.testbed_id = :testbed) "
                   "ORDER BY c.committed_at DESC, c.id DESC LIMIT 1");
      newest->bind(":repo", repo).bind(":testbed", testbed);
      if (!newest->step()) continue;
      const CommitId commit = newest->get<CommitId>("id");
      Query q(db_,
              "SELECT r.name AS repo, t.name AS testbed, cs.variant AS variant, p.key AS point_key, "
              "  p.label AS point_label, cs.metric AS metric, c.sha AS sha, cs.geomean_of_run_medians AS value, "
              "  cs.runs AS runs, c.committed_at AS committed_at, nb.band_rel AS band_rel, "
              "  coalesce(nb.calibrated, 0) AS calibrated "
              "FROM commit_summaries cs JOIN commits c ON c.id = cs.commit_id JOIN repos r ON r.id = c.repo_id "
              "JOIN testbeds t ON t.id = cs.testbed_id JOIN points p ON p.id = cs.point_id "
              "LEFT JOIN noise_bands nb ON nb.testbed_id = cs.testbed_id AND nb.variant = cs.variant "
              "  AND nb.point_id = cs.point_id "
              "WHERE cs.commit_id = :commit AND cs.testbed_id = :testbed ORDER BY cs.variant, p.key");
      q->bind(":commit", commit).bind(":testbed", testbed);
      while (q->step() && static_cast<int>(out.size()) < limit) {
        LatestPointValue v;
        v.repo = q->get<std::string>("repo");
        v.testbed = q->get<std::string>("testbed");
        v.variant = q->get<std::string>("variant");
        v.point_key = q->get<std::string>("point_key");
        v.point_label = q->get<std::string>("point_label");
        v.metric = q->get<std::string>("metric");
        v.sha = q->get<std::string>("sha");
        v.value = q->get<double>("value");
        v.runs = q->get<std::int64_t>("runs");
        v.committed_at = q->get<UnixSeconds>("committed_at");
        v.band_rel = q->get<std::optional<double>>("band_rel");
        v.band_calibrated = q->get<bool>("calibrated");
        out.push_back(std::move(v));
      }
      if (static_cast<int>(out.size()) >= limit) break;
    }
    return out;
  });
}

Result<std::vector<MetricRunMedian>> WebReader::metric_run_medians(CommitId commit, std::optional<TestbedId> testbed,
                                                                   std::string_view metric) {
  return guard(db_, "read the run medians of " + std::string(metric), [&] {
    // (+r.status: runs are looked up by commit, the index's first column.)
    Query q(db_,
            "SELECT r.id AS run_id, r.testbed_id AS testbed_id, v.name AS variant, s.point_id AS point_id, "
            "  s.median AS median, s.n AS n, r.started_at AS started_at "
            "FROM runs r JOIN run_variants v ON v.run_id = r.id "
            "JOIN summaries s ON s.variant_id = v.id AND s.metric = :metric "
            "WHERE r.commit_id = :commit AND (:testbed IS NULL OR r.testbed_id = :testbed) "
            "  AND r.kind IN ('bench', 'baseline-rerun') AND +r.status = 'ok' AND r.testbed_id IS NOT NULL "
            "  AND s.median IS NOT NULL "
            "ORDER BY v.name, s.point_id, r.id");
    q->bind(":commit", commit).bind(":testbed", testbed).bind(":metric", metric);
    std::vector<MetricRunMedian> out;
    while (q->step())
      out.push_back({{q->get<RunId>("run_id"), q->get<std::string>("variant"), q->get<PointId>("point_id"),
                      q->get<double>("median"), q->get<std::int64_t>("n"), q->get<UnixSeconds>("started_at")},
                     q->get<TestbedId>("testbed_id")});
    return out;
  });
}


}  // namespace perfwatch::store
