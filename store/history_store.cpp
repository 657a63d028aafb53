#include "store/history_store.h"

#include <algorithm>

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

// The first-parent chain from :head, newest first: pos 0 is the head. Each
// step is one lookup in commits_by_sha (repo_id, sha = the child's parent).
// The summary of the metric asked for (:metric), else the judged one.
constexpr const char* kMetricMatch = "(CASE WHEN :metric = '' THEN s.judged = 1 ELSE s.metric = :metric END)";

constexpr const char* kChain =
    "WITH RECURSIVE chain(id, parent_sha, pos) AS ("
    "  SELECT id, parent_sha, 0 FROM commits WHERE repo_id = :repo AND sha = :head"
    "  UNION ALL"
    "  SELECT c.id, c.parent_sha, chain.pos + 1 FROM chain JOIN commits c"
    "    ON c.repo_id = :repo AND c.sha = chain.parent_sha"
    "  WHERE chain.pos + 1 < :depth) ";

std::string head_of(Database& db, const ChainStart& start) {
  if (!start.head_sha.empty()) return start.head_sha;
  Query q(db, "SELECT head_sha FROM branches WHERE repo_id = :repo AND name = :name");
  q->bind(":repo", start.repo_id).bind(":name", start.branch);
  if (!q->step()) raise(ErrorCode::kNotFound, "branch '" + start.branch + "': not watched in this repo");
  return q->get<std::string>("head_sha");
}

// ",bench,baseline-rerun," for instr(): the kinds as one bound value keeps
// the statement text fixed (and cached) whatever the list.
std::string kinds_list(const std::vector<RunKind>& kinds) {
  std::string out = ",";
  for (auto k : kinds) {
    out += to_string(k);
    out += ',';
  }
  return out;
}

}  // namespace

Result<std::vector<CommitRecord>> HistoryReader::chain(const ChainStart& start, int limit) {
  return guard(db_, "read the commit chain", [&] {
    if (limit < 0) raise(ErrorCode::kInvalidArgument, "limit must be >= 0");
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    auto head = head_of(db_, start);
    Query q(db_, std::string(kChain) + "SELECT " + detail::kCommitColumns +
                     " FROM chain JOIN commits c ON c.id = chain.id ORDER BY chain.pos");
    q->bind(":repo", start.repo_id).bind(":head", head).bind(":depth", limit);
    std::vector<CommitRecord> out;
    while (q->step()) out.push_back(detail::read_commit(*q));
    return out;
  });
}

Result<std::vector<CommitOverview>> HistoryReader::commits(const ChainStart& start, int limit, int offset) {
  return guard(db_, "list commits", [&] {
    if (limit < 0 || offset < 0) raise(ErrorCode::kInvalidArgument, "limit and offset must be >= 0");
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    auto head = head_of(db_, start);
    std::vector<CommitOverview> out;
    {
      Query q(db_, std::string(kChain) + "SELECT " + detail::kCommitColumns +
                       " FROM chain JOIN commits c ON c.id = chain.id WHERE chain.pos >= :offset ORDER BY chain.pos");
      q->bind(":repo", start.repo_id).bind(":head", head).bind(":depth", limit + offset).bind(":offset", offset);
      while (q->step()) {
        CommitOverview o;
        o.commit = detail::read_commit(*q);
        out.push_back(std::move(o));
      }
    }
    for (auto& o : out) {
      CommitId id = o.commit.id;
      {
        // A running run's trials are counted live; a finished run keeps its count.
        Query q(db_,
                "SELECT status, count(*) AS n, sum(coalesce(wall_s, 0)) AS wall_s, "
                "  sum(CASE WHEN status = 'running' THEN (SELECT count(*) FROM trials t WHERE t.run_id = r.id) "
                "      ELSE trial_count END) AS trials "
                "FROM runs r WHERE r.commit_id = :commit GROUP BY status");
        q->bind(":commit", id);
        while (q->step()) {
          auto n = q->get<std::int64_t>("n");
          o.runs_by_status[detail::read_enum(*q, "status", parse_run_status)] = n;
          o.runs += n;
          o.trials += q->get<std::int64_t>("trials");
          o.wall_s += q->get<double>("wall_s");
        }
      }
      if (o.runs > 0) {
        Query q(db_, "SELECT status FROM runs WHERE commit_id = :commit ORDER BY id DESC LIMIT 1");
        q->bind(":commit", id);
        if (q->step()) o.latest_run_status = detail::read_enum(*q, "status", parse_run_status);
      }
      {
        Query q(db_,
                "SELECT (SELECT status FROM builds WHERE commit_id = :commit ORDER BY id DESC LIMIT 1) AS latest, "
                "  (SELECT total(duration_s) FROM builds WHERE commit_id = :commit) AS build_s");
        q->bind(":commit", id);
        q->step();
        if (!q->is_null("latest")) o.latest_build_status = detail::read_enum(*q, "latest", parse_build_status);
        o.build_s = q->get<double>("build_s");
      }
      {
        Query q(db_,
                "SELECT state FROM jobs WHERE repo_id = :repo AND commit_sha = :sha ORDER BY id DESC LIMIT 1");
        q->bind(":repo", o.commit.repo_id).bind(":sha", o.commit.sha);
        if (q->step()) o.latest_job_state = detail::read_enum(*q, "state", parse_job_state);
      }
      {
        Query q(db_,
                "SELECT kind, count(*) AS n FROM flags WHERE commit_id = :commit AND ack_at IS NULL AND withdrawn_at IS NULL GROUP BY kind");
        q->bind(":commit", id);
        while (q->step()) {
          auto kind = detail::read_enum(*q, "kind", parse_flag_kind);
          if (kind == FlagKind::kRegression) o.open_regressions = q->get<std::int64_t>("n");
          if (kind == FlagKind::kImprovement) o.open_improvements = q->get<std::int64_t>("n");
        }
      }
    }
    return out;
  });
}

Result<PointHistory> HistoryReader::point_history(const HistoryQuery& query) {
  return guard(db_, "read history of " + query.variant + " at " + query.point_key, [&] {
    if (query.limit < 0) raise(ErrorCode::kInvalidArgument, "limit must be >= 0");
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    PointHistory out;
    out.variant = query.variant;
    {
      Query q(db_, std::string("SELECT ") + detail::kPointColumns + " FROM points p WHERE p.key = :key");
      q->bind(":key", query.point_key);
      if (!q->step()) raise(ErrorCode::kNotFound, "point " + query.point_key + ": no such point");
      out.point = detail::read_point(*q);
    }
    auto head = head_of(db_, query.start);
    const std::string kinds = kinds_list(query.kinds);
    auto bind_chain = [&](detail::Statement& s) {
      s.bind(":repo", query.start.repo_id).bind(":head", head).bind(":depth", query.limit);
    };

    out.testbed_id = query.testbed_id;
    if (!out.testbed_id) {
      // Walks back from the head only until a commit has an ok run with a
      // summary at this variant x point: usually one step.
      Query q(db_,
              // (+r.status: look runs up by commit, not by status in id order.)
              std::string("WITH RECURSIVE chain(id, parent_sha, pos, testbed) AS ("
              "  SELECT NULL, :head, -1, NULL"
              "  UNION ALL"
              "  SELECT c.id, c.parent_sha, chain.pos + 1, ("
              "      SELECT r.testbed_id FROM runs r"
              "      JOIN run_variants v ON v.run_id = r.id AND v.name = :variant"
              "      JOIN summaries s ON s.variant_id = v.id AND s.point_id = :point AND ") + kMetricMatch +
              "      WHERE r.commit_id = coalesce(c.inherited_from, c.id) AND +r.status = 'ok'"
              "        AND r.testbed_id IS NOT NULL AND instr(:kinds, ',' || r.kind || ',') > 0"
              "      ORDER BY r.id DESC LIMIT 1)"
              "  FROM chain JOIN commits c ON c.repo_id = :repo AND c.sha = chain.parent_sha"
              "  WHERE chain.testbed IS NULL AND chain.pos + 1 < :depth) "
              "SELECT testbed FROM chain WHERE testbed IS NOT NULL");
      bind_chain(*q);
      q->bind(":variant", query.variant).bind(":point", out.point.id).bind(":kinds", kinds).bind(":metric", query.metric);
      if (q->step()) out.testbed_id = q->get<TestbedId>("testbed");
    }
    if (!out.testbed_id) return out;  // nothing measured at this point on this chain
    const TestbedId testbed = *out.testbed_id;

    {
      Query q(db_, std::string("SELECT ") + detail::kNoiseBandColumns +
                       " FROM noise_bands nb WHERE nb.testbed_id = :testbed AND nb.variant = :variant "
                       "AND nb.point_id = :point");
      q->bind(":testbed", testbed).bind(":variant", query.variant).bind(":point", out.point.id);
      if (q->step()) out.band = detail::read_noise_band(*q);
    }

    // One walk of the chain, newest first; a row per commit x ok run (one
    // row with NULL run columns for a commit without runs). For each commit:
    // its pooled value and newest flag; for each run: the median of the
    // run's variant (by name) at the point. Every join is an index lookup.
    std::vector<HistoryEntry> entries;
    entries.reserve(static_cast<std::size_t>(std::min(query.limit, 4096)));
    Query q(db_, std::string(kChain) +
                     "SELECT chain.pos AS pos, c.id AS commit_id, c.sha AS sha, c.subject AS subject, "
                     "  c.author AS author, c.committed_at AS committed_at, c.inherited_from AS inherited_from, "
                     "  cs.commit_id AS pooled_commit, cs.metric AS pooled_metric, cs.runs AS pooled_runs, "
                     "  cs.geomean_of_run_medians AS pooled_geomean, cs.ci_low AS pooled_ci_low, cs.ci_high AS pooled_ci_high, "
                     "  cs.updated_at AS pooled_updated_at, "
                     "  (SELECT max(f.id) FROM flags f WHERE f.commit_id = c.id AND f.testbed_id = :testbed "
                     "     AND f.variant = :variant AND f.point_id = :point "
                     "     AND f.withdrawn_at IS NULL) AS flag_id, "
                     "  cmp.id AS cmp_id, cmp.against_commit_id AS cmp_against, cmp.metric AS cmp_metric, "
                     "  cmp.ratio AS cmp_ratio, cmp.ci_low AS cmp_ci_low, cmp.ci_high AS cmp_ci_high, "
                     "  cmp.p_value AS cmp_p_value, cmp.band_rel AS cmp_band_rel, "
                     "  cmp.band_calibrated AS cmp_band_calibrated, cmp.runs AS cmp_runs, "
                     "  cmp.against_runs AS cmp_against_runs, cmp.verdict AS cmp_verdict, "
                     "  cmp.updated_at AS cmp_updated_at, "
                     "  r.id AS run_id, r.kind AS run_kind, s.median AS median, s.ci_low AS ci_low, "
                     "  s.ci_high AS ci_high, s.n AS n "
                     "FROM chain JOIN commits c ON c.id = chain.id "
                     "LEFT JOIN commit_summaries cs ON cs.commit_id = coalesce(c.inherited_from, c.id) "
                     "  AND cs.testbed_id = :testbed AND cs.variant = :variant AND cs.point_id = :point "
                     "  AND (:metric = '' OR cs.metric = :metric) "
                     "LEFT JOIN comparisons cmp ON cmp.id = (SELECT x.id FROM comparisons x "
                     "  WHERE x.commit_id = c.id AND x.testbed_id = :testbed AND x.variant = :variant "
                     "  AND x.point_id = :point AND x.basis = 'previous' ORDER BY x.updated_at DESC, x.id DESC LIMIT 1) "
                     "LEFT JOIN runs r ON r.commit_id = coalesce(c.inherited_from, c.id) AND r.testbed_id = :testbed "
                     "  AND r.status = 'ok' AND instr(:kinds, ',' || r.kind || ',') > 0 "
                     "LEFT JOIN run_variants v ON v.run_id = r.id AND v.name = :variant "
                     "LEFT JOIN summaries s ON s.variant_id = v.id AND s.point_id = :point AND " + kMetricMatch + " "
                     "ORDER BY chain.pos, r.id");
    bind_chain(*q);
    q->bind(":testbed", testbed).bind(":variant", query.variant).bind(":point", out.point.id).bind(":kinds", kinds);
    q->bind(":metric", query.metric);
    std::vector<std::pair<std::size_t, FlagId>> flags;
    std::int64_t last_pos = -1;
    while (q->step()) {
      auto pos = q->get<std::int64_t>("pos");
      if (pos != last_pos) {
        last_pos = pos;
        HistoryEntry e;
        e.commit_id = q->get<CommitId>("commit_id");
        e.sha = q->get<std::string>("sha");
        e.subject = q->get<std::string>("subject");
        e.author = q->get<std::string>("author");
        e.committed_at = q->get<UnixSeconds>("committed_at");
        e.inherited_from = q->get<std::optional<CommitId>>("inherited_from");
        if (auto pooled = q->get<std::optional<CommitId>>("pooled_commit"))
          e.pooled = CommitSummaryRecord{*pooled,
                                         testbed,
                                         query.variant,
                                         out.point.id,
                                         q->get<std::string>("pooled_metric"),
                                         q->get<std::int64_t>("pooled_runs"),
                                         q->get<double>("pooled_geomean"),
                                         q->get<std::optional<double>>("pooled_ci_low"),
                                         q->get<std::optional<double>>("pooled_ci_high"),
                                         q->get<UnixSeconds>("pooled_updated_at")};
        if (auto flag = q->get<std::optional<FlagId>>("flag_id")) flags.emplace_back(entries.size(), *flag);
        if (auto cmp = q->get<std::optional<ComparisonId>>("cmp_id")) {
          ComparisonRecord c;
          c.id = *cmp;
          c.commit_id = e.commit_id;
          c.against_commit_id = q->get<CommitId>("cmp_against");
          c.basis = ComparisonBasis::kPrevious;
          c.testbed_id = testbed;
          c.variant = query.variant;
          c.point_id = out.point.id;
          c.metric = q->get<std::string>("cmp_metric");
          c.ratio = q->get<std::optional<double>>("cmp_ratio");
          c.ci_low = q->get<std::optional<double>>("cmp_ci_low");
          c.ci_high = q->get<std::optional<double>>("cmp_ci_high");
          c.p_value = q->get<std::optional<double>>("cmp_p_value");
          c.band_rel = q->get<std::optional<double>>("cmp_band_rel");
          if (auto b = q->get<std::optional<std::int64_t>>("cmp_band_calibrated")) c.band_calibrated = *b != 0;
          c.runs = q->get<std::int64_t>("cmp_runs");
          c.against_runs = q->get<std::int64_t>("cmp_against_runs");
          c.verdict = detail::read_enum(*q, "cmp_verdict", parse_change_verdict);
          c.updated_at = q->get<UnixSeconds>("cmp_updated_at");
          e.comparison = std::move(c);
        }
        entries.push_back(std::move(e));
      }
      if (auto median = q->get<std::optional<double>>("median"))
        entries.back().runs.push_back({q->get<RunId>("run_id"), detail::read_enum(*q, "run_kind", parse_run_kind),
                                       *median, q->get<std::optional<double>>("ci_low"),
                                       q->get<std::optional<double>>("ci_high"), q->get<std::int64_t>("n")});
    }
    // Flags are few (a handful per point); read each by id.
    for (auto [index, id] : flags) {
      Query f(db_, std::string("SELECT ") + detail::kFlagColumns + " FROM flags f WHERE f.id = :id");
      f->bind(":id", id);
      if (f->step()) entries[index].flag = detail::read_flag(*f);
    }
    std::reverse(entries.begin(), entries.end());
    std::erase_if(entries, [&](const HistoryEntry& e) { return !query.include_unmeasured && e.runs.empty() && !e.pooled; });
    out.entries = std::move(entries);
    return out;
  });
}

Result<std::optional<CommitRecord>> HistoryReader::previous_measured(CommitId commit, TestbedId testbed,
                                                                     RunKind kind) {
  return guard(db_, "find the previous measured commit", [&]() -> std::optional<CommitRecord> {
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    RepoId repo = 0;
    {
      Query q(db_, "SELECT repo_id FROM commits WHERE id = :id");
      q->bind(":id", commit);
      if (!q->step()) raise(ErrorCode::kNotFound, "commit " + std::to_string(commit) + ": no such commit");
      repo = q->get<RepoId>("repo_id");
    }
    // The walk stops at the first ancestor with results of its own.
    Query q(db_,
            std::string("WITH RECURSIVE chain(id, parent_sha, measured) AS ("
                        "  SELECT id, parent_sha, 0 FROM commits WHERE id = :commit"
                        "  UNION ALL"
                        "  SELECT c.id, c.parent_sha, (c.inherited_from IS NULL AND EXISTS ("
                        "      SELECT 1 FROM runs r WHERE r.commit_id = c.id AND r.testbed_id = :testbed"
                        "        AND r.kind = :kind AND r.status = 'ok'))"
                        "  FROM chain JOIN commits c ON c.repo_id = :repo AND c.sha = chain.parent_sha"
                        "  WHERE chain.measured = 0) "
                        "SELECT ") +
                detail::kCommitColumns + " FROM chain JOIN commits c ON c.id = chain.id WHERE chain.measured = 1");
    q->bind(":commit", commit).bind(":testbed", testbed).bind(":kind", to_string(kind)).bind(":repo", repo);
    if (!q->step()) return std::nullopt;
    return detail::read_commit(*q);
  });
}

Result<std::vector<CommitRecord>> HistoryReader::next_measured(CommitId commit, TestbedId testbed, RunKind kind) {
  return guard(db_, "find the next measured commits", [&] {
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    // Forward along parent_sha from the commit's children, through commits
    // without results of their own (inherited, failed, not yet run).
    Query q(db_,
            std::string("WITH RECURSIVE chain(id, sha, measured) AS ("
                        "  SELECT c.id, c.sha, 0 FROM commits c WHERE c.id = :commit"
                        "  UNION ALL"
                        "  SELECT c.id, c.sha, (c.inherited_from IS NULL AND EXISTS ("
                        "      SELECT 1 FROM runs r WHERE r.commit_id = c.id AND r.testbed_id = :testbed"
                        "        AND r.kind = :kind AND r.status = 'ok'))"
                        "  FROM chain JOIN commits c ON c.repo_id = (SELECT repo_id FROM commits WHERE id = :commit)"
                        "    AND c.parent_sha = chain.sha"
                        "  WHERE chain.measured = 0) "
                        "SELECT ") +
                detail::kCommitColumns +
                " FROM chain JOIN commits c ON c.id = chain.id WHERE chain.measured = 1 ORDER BY c.committed_at, c.id");
    q->bind(":commit", commit).bind(":testbed", testbed).bind(":kind", to_string(kind));
    std::vector<CommitRecord> out;
    while (q->step()) out.push_back(detail::read_commit(*q));
    return out;
  });
}

Result<StoreMetrics> HistoryReader::metrics() {
  return guard(db_, "read metrics", [&] {
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    StoreMetrics m;
    for (auto s : {JobState::kQueued, JobState::kRunning, JobState::kDone, JobState::kFailed, JobState::kCutOff,
                   JobState::kSkipped, JobState::kGaveUp})
      m.jobs_by_state[s] = 0;
    for (auto s : {RunStatus::kRunning, RunStatus::kOk, RunStatus::kBuildFailed, RunStatus::kCrashed,
                   RunStatus::kTimeout, RunStatus::kProtocolError, RunStatus::kCutOff, RunStatus::kFailed,
                   RunStatus::kStoreFailed, RunStatus::kLost})
      m.runs_by_status[s] = 0;
    {
      Query q(db_, "SELECT state, count(*) AS n FROM jobs GROUP BY state");
      while (q->step()) m.jobs_by_state[detail::read_enum(*q, "state", parse_job_state)] = q->get<std::int64_t>("n");
    }
    {
      Query q(db_, "SELECT status, count(*) AS n FROM runs GROUP BY status");
      while (q->step())
        m.runs_by_status[detail::read_enum(*q, "status", parse_run_status)] = q->get<std::int64_t>("n");
    }
    {
      Query q(db_,
              "SELECT (SELECT max(finished_at) FROM runs WHERE finished_at IS NOT NULL) AS last_finished, "
              "  (SELECT count(*) FROM flags WHERE kind = 'regression' AND ack_at IS NULL AND withdrawn_at IS NULL) AS open_regressions, "
              "  (SELECT count(*) FROM experiments) AS experiments");
      q->step();
      m.last_run_finished_at = q->get<std::optional<UnixSeconds>>("last_finished");
      m.open_regressions = q->get<std::int64_t>("open_regressions");
      m.experiments = q->get<std::int64_t>("experiments");
    }
    return m;
  });
}

}  // namespace perfwatch::store
