#include "store/analysis_store.h"

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

void put_summary_row(Database& db, const SummaryRecord& s) {
  Query q(db,
          "INSERT INTO summaries (run_id, variant_id, point_id, metric, judged, n, median, ci_low, ci_high, mean, "
          "  stddev, minimum, maximum, dropped_throttled, stop_reason, computed_at) "
          "VALUES (:run, :variant, :point, :metric, :judged, :n, :median, :ci_low, :ci_high, :mean, :stddev, :minimum, "
          "  :maximum, :dropped, :stop_reason, :computed_at) "
          "ON CONFLICT (variant_id, point_id, metric) DO UPDATE SET run_id = excluded.run_id, judged = excluded.judged, "
          "  n = excluded.n, median = excluded.median, ci_low = excluded.ci_low, ci_high = excluded.ci_high, "
          "  mean = excluded.mean, stddev = excluded.stddev, minimum = excluded.minimum, "
          "  maximum = excluded.maximum, dropped_throttled = excluded.dropped_throttled, "
          "  stop_reason = excluded.stop_reason, computed_at = excluded.computed_at");
  q->bind(":run", s.run_id)
      .bind(":variant", s.variant_id)
      .bind(":point", s.point_id)
      .bind(":metric", s.metric)
      .bind(":judged", s.judged)
      .bind(":n", s.n)
      .bind(":median", s.median)
      .bind(":ci_low", s.ci_low)
      .bind(":ci_high", s.ci_high)
      .bind(":mean", s.mean)
      .bind(":stddev", s.stddev)
      .bind(":minimum", s.minimum)
      .bind(":maximum", s.maximum)
      .bind(":dropped", s.dropped_throttled)
      .bind(":stop_reason", s.stop_reason)
      .bind(":computed_at", s.computed_at != 0 ? s.computed_at : db.now());
  q->run();
}

}  // namespace

Status AnalysisWriter::put_summary(const SummaryRecord& s) {
  return guard(db_, "put summary", [&] { put_summary_row(db_, s); });
}

Status AnalysisWriter::put_summaries(std::span<const SummaryRecord> summaries) {
  return guard(db_, "put summaries", [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    for (const auto& s : summaries) put_summary_row(db_, s);
    detail::check(tx.commit());
  });
}

Status AnalysisWriter::put_commit_summary(const CommitSummaryRecord& s) {
  return guard(db_, "put commit summary", [&] {
    Query q(db_,
            "INSERT INTO commit_summaries (commit_id, testbed_id, variant, point_id, metric, runs, "
            "  geomean_of_run_medians, ci_low, ci_high, updated_at) "
            "VALUES (:commit, :testbed, :variant, :point, :metric, :runs, :geomean, :ci_low, :ci_high, :now) "
            "ON CONFLICT (commit_id, testbed_id, variant, point_id) DO UPDATE SET metric = excluded.metric, "
            "  runs = excluded.runs, geomean_of_run_medians = excluded.geomean_of_run_medians, ci_low = excluded.ci_low, "
            "  ci_high = excluded.ci_high, updated_at = excluded.updated_at");
    q->bind(":commit", s.commit_id)
        .bind(":testbed", s.testbed_id)
        .bind(":variant", s.variant)
        .bind(":point", s.point_id)
        .bind(":metric", s.metric)
        .bind(":runs", s.runs)
        .bind(":geomean", s.geomean_of_run_medians)
        .bind(":ci_low", s.ci_low)
        .bind(":ci_high", s.ci_high)
        .bind(":now", db_.now());
    q->run();
  });
}

Status AnalysisWriter::put_noise_band(const NoiseBandRecord& b) {
  return guard(db_, "put noise band", [&] {
    if (!(b.band_rel >= 0)) raise(ErrorCode::kInvalidArgument, "noise band: band_rel must be >= 0");
    Query q(db_,
            "INSERT INTO noise_bands (testbed_id, variant, point_id, band_rel, method, k_runs, calibrated, source, "
            "  updated_at) "
            "VALUES (:testbed, :variant, :point, :band, :method, :k, :calibrated, :source, :now) "
            "ON CONFLICT (testbed_id, variant, point_id) DO UPDATE SET band_rel = excluded.band_rel, "
            "  method = excluded.method, k_runs = excluded.k_runs, calibrated = excluded.calibrated, "
            "  source = excluded.source, updated_at = excluded.updated_at");
    q->bind(":testbed", b.testbed_id)
        .bind(":variant", b.variant)
        .bind(":point", b.point_id)
        .bind(":band", b.band_rel)
        .bind(":method", b.method)
        .bind(":k", b.k_runs)
        .bind(":calibrated", b.calibrated)
        .bind(":source", to_string(b.source))
        .bind(":now", db_.now());
    q->run();
  });
}

Result<ComparisonId> AnalysisWriter::put_comparison(const ComparisonRecord& c) {
  return guard(db_, "put comparison", [&] {
    Query q(db_,
            "INSERT INTO comparisons (commit_id, against_commit_id, basis, testbed_id, variant, point_id, metric, "
            "  ratio, ci_low, ci_high, p_value, band_rel, band_calibrated, runs, against_runs, verdict, updated_at) "
            "VALUES (:commit, :against, :basis, :testbed, :variant, :point, :metric, :ratio, :ci_low, :ci_high, "
            "  :p_value, :band, :calibrated, :runs, :against_runs, :verdict, :now) "
            "ON CONFLICT (commit_id, against_commit_id, testbed_id, variant, point_id) DO UPDATE SET "
            "  basis = excluded.basis, metric = excluded.metric, ratio = excluded.ratio, ci_low = excluded.ci_low, "
            "  ci_high = excluded.ci_high, p_value = excluded.p_value, band_rel = excluded.band_rel, "
            "  band_calibrated = excluded.band_calibrated, runs = excluded.runs, against_runs = excluded.against_runs, verdict = excluded.verdict, "
            "  updated_at = excluded.updated_at "
            "RETURNING id");
    q->bind(":commit", c.commit_id)
        .bind(":against", c.against_commit_id)
        .bind(":basis", to_string(c.basis))
        .bind(":testbed", c.testbed_id)
        .bind(":variant", c.variant)
        .bind(":point", c.point_id)
        .bind(":metric", c.metric)
        .bind(":ratio", c.ratio)
        .bind(":ci_low", c.ci_low)
        .bind(":ci_high", c.ci_high)
        .bind(":p_value", c.p_value)
        .bind(":band", c.band_rel)
        .bind(":calibrated", c.band_calibrated)
        .bind(":runs", c.runs)
        .bind(":against_runs", c.against_runs)
        .bind(":verdict", to_string(c.verdict))
        .bind(":now", db_.now());
    return q->returning<ComparisonId>("id");
  });
}

Result<RaisedFlag> AnalysisWriter::raise_flag(const FlagRecord& f) {
  return guard(db_, "raise flag", [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    RaisedFlag out;
    {
      Query find(db_,
                 "SELECT id FROM flags WHERE commit_id = :commit AND testbed_id = :testbed AND variant = :variant "
                 "AND point_id = :point AND kind = :kind");
      find->bind(":commit", f.commit_id)
          .bind(":testbed", f.testbed_id)
          .bind(":variant", f.variant)
          .bind(":point", f.point_id)
          .bind(":kind", to_string(f.kind));
      if (find->step()) out.id = find->get<FlagId>("id");
    }
    if (out.id != 0) {
      Query q(db_,
              "UPDATE flags SET magnitude_rel = :magnitude, comparison_id = :comparison, detail_json = :detail "
              "WHERE id = :id");
      q->bind(":magnitude", f.magnitude_rel).bind(":comparison", f.comparison_id).bind(":detail", f.detail);
      q->bind(":id", out.id);
      q->run();
    } else {
      Query q(db_,
              "INSERT INTO flags (commit_id, testbed_id, variant, point_id, kind, magnitude_rel, comparison_id, "
              "  detail_json, created_at) "
              "VALUES (:commit, :testbed, :variant, :point, :kind, :magnitude, :comparison, :detail, :now) "
              "RETURNING id");
      q->bind(":commit", f.commit_id)
          .bind(":testbed", f.testbed_id)
          .bind(":variant", f.variant)
          .bind(":point", f.point_id)
          .bind(":kind", to_string(f.kind))
          .bind(":magnitude", f.magnitude_rel)
          .bind(":comparison", f.comparison_id)
          .bind(":detail", f.detail)
          .bind(":now", f.created_at != 0 ? f.created_at : db_.now());
      out.id = q->returning<FlagId>("id");
      out.created = true;
    }
    detail::check(tx.commit());
    return out;
  });
}

Status AnalysisWriter::update_flag(FlagId flag, double magnitude_rel, std::optional<ComparisonId> comparison,
                                   const nlohmann::json& detail) {
  return guard(db_, "update flag " + std::to_string(flag), [&] {
    Query q(db_,
            "UPDATE flags SET magnitude_rel = :magnitude, comparison_id = :comparison, detail_json = :detail, "
            "  withdrawn_reason = NULL, withdrawn_at = NULL "
            "WHERE id = :id");
    q->bind(":magnitude", magnitude_rel).bind(":comparison", comparison).bind(":detail", detail).bind(":id", flag);
    q->run();
    if (q->changes() == 0) raise(ErrorCode::kNotFound, "flag " + std::to_string(flag) + ": no such flag");
  });
}

Status AnalysisWriter::withdraw_flag(FlagId flag, std::string_view reason) {
  return guard(db_, "withdraw flag " + std::to_string(flag), [&] {
    if (reason.empty()) raise(ErrorCode::kInvalidArgument, "withdraw: reason is empty");
    Query q(db_, "UPDATE flags SET withdrawn_reason = :reason, withdrawn_at = :now WHERE id = :id");
    q->bind(":reason", reason).bind(":now", db_.now()).bind(":id", flag);
    q->run();
    if (q->changes() == 0) raise(ErrorCode::kNotFound, "flag " + std::to_string(flag) + ": no such flag");
  });
}

Status AnalysisWriter::acknowledge_flag(FlagId flag, std::string_view reason, std::string_view by) {
  return guard(db_, "acknowledge flag " + std::to_string(flag), [&] {
    if (reason.empty()) raise(ErrorCode::kInvalidArgument, "acknowledge: reason is empty");
    Query q(db_, "UPDATE flags SET ack_reason = :reason, ack_by = :by, ack_at = :now WHERE id = :id");
    q->bind(":reason", reason).bind(":by", by).bind(":now", db_.now()).bind(":id", flag);
    q->run();
    if (q->changes() == 0) raise(ErrorCode::kNotFound, "flag " + std::to_string(flag) + ": no such flag");
  });
}

// ---------------------------------------------------------------- reads

Result<std::vector<RunMedian>> AnalysisReader::run_medians(CommitId commit, TestbedId testbed, RunKind kind) {
  return guard(db_, "read run medians", [&] {
    Query q(db_,
            "SELECT r.id AS run_id, v.name AS variant, s.point_id AS point_id, s.median AS median, s.n AS n, "
            "  r.started_at AS started_at "
            "FROM runs r JOIN run_variants v ON v.run_id = r.id "
            "JOIN summaries s ON s.variant_id = v.id AND s.judged = 1 "
            "WHERE r.commit_id = :commit AND r.testbed_id = :testbed AND r.kind = :kind AND r.status = 'ok' "
            "  AND s.median IS NOT NULL "
            "ORDER BY v.name, s.point_id, r.id");
    q->bind(":commit", commit).bind(":testbed", testbed).bind(":kind", to_string(kind));
    std::vector<RunMedian> out;
    while (q->step())
      out.push_back({q->get<RunId>("run_id"), q->get<std::string>("variant"), q->get<PointId>("point_id"),
                     q->get<double>("median"), q->get<std::int64_t>("n"), q->get<UnixSeconds>("started_at")});
    return out;
  });
}

Result<std::optional<CommitSummaryRecord>> AnalysisReader::commit_summary(CommitId commit, TestbedId testbed,
                                                                          std::string_view variant, PointId point) {
  return guard(db_, "read commit summary", [&]() -> std::optional<CommitSummaryRecord> {
    Query q(db_, std::string("SELECT ") + detail::kCommitSummaryColumns +
                     " FROM commit_summaries cs WHERE cs.commit_id = :commit AND cs.testbed_id = :testbed "
                     "AND cs.variant = :variant AND cs.point_id = :point");
    q->bind(":commit", commit).bind(":testbed", testbed).bind(":variant", variant).bind(":point", point);
    if (!q->step()) return std::nullopt;
    return detail::read_commit_summary(*q);
  });
}

Result<std::vector<CommitSummaryRecord>> AnalysisReader::commit_summaries(CommitId commit) {
  return guard(db_, "list commit summaries", [&] {
    Query q(db_, std::string("SELECT ") + detail::kCommitSummaryColumns +
                     " FROM commit_summaries cs WHERE cs.commit_id = :commit "
                     "ORDER BY cs.testbed_id, cs.variant, cs.point_id");
    q->bind(":commit", commit);
    std::vector<CommitSummaryRecord> out;
    while (q->step()) out.push_back(detail::read_commit_summary(*q));
    return out;
  });
}

Result<std::optional<NoiseBandRecord>> AnalysisReader::noise_band(TestbedId testbed, std::string_view variant,
                                                                  PointId point) {
  return guard(db_, "read noise band", [&]() -> std::optional<NoiseBandRecord> {
    Query q(db_, std::string("SELECT ") + detail::kNoiseBandColumns +
                     " FROM noise_bands nb WHERE nb.testbed_id = :testbed AND nb.variant = :variant "
                     "AND nb.point_id = :point");
    q->bind(":testbed", testbed).bind(":variant", variant).bind(":point", point);
    if (!q->step()) return std::nullopt;
    return detail::read_noise_band(*q);
  });
}

Result<std::vector<NoiseBandRecord>> AnalysisReader::noise_bands(TestbedId testbed) {
  return guard(db_, "list noise bands", [&] {
    Query q(db_, std::string("SELECT ") + detail::kNoiseBandColumns +
                     " FROM noise_bands nb WHERE nb.testbed_id = :testbed ORDER BY nb.variant, nb.point_id");
    q->bind(":testbed", testbed);
    std::vector<NoiseBandRecord> out;
    while (q->step()) out.push_back(detail::read_noise_band(*q));
    return out;
  });
}

Result<ComparisonRecord> AnalysisReader::comparison(ComparisonId id) {
  return guard(db_, "read comparison", [&] {
    Query q(db_, std::string("SELECT ") + detail::kComparisonColumns + " FROM comparisons cmp WHERE cmp.id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, "comparison " + std::to_string(id) + ": no such comparison");
    return detail::read_comparison(*q);
  });
}

Result<std::vector<ComparisonRecord>> AnalysisReader::comparisons_of_commit(CommitId commit) {
  return guard(db_, "list comparisons", [&] {
    Query q(db_, std::string("SELECT ") + detail::kComparisonColumns +
                     " FROM comparisons cmp WHERE cmp.commit_id = :commit "
                     "ORDER BY cmp.against_commit_id, cmp.testbed_id, cmp.variant, cmp.point_id");
    q->bind(":commit", commit);
    std::vector<ComparisonRecord> out;
    while (q->step()) out.push_back(detail::read_comparison(*q));
    return out;
  });
}

Result<std::vector<ComparisonRecord>> AnalysisReader::comparisons_against(CommitId commit) {
  return guard(db_, "list comparisons against a commit", [&] {
    Query q(db_, std::string("SELECT ") + detail::kComparisonColumns +
                     " FROM comparisons cmp WHERE cmp.against_commit_id = :commit "
                     "ORDER BY cmp.commit_id, cmp.testbed_id, cmp.variant, cmp.point_id");
    q->bind(":commit", commit);
    std::vector<ComparisonRecord> out;
    while (q->step()) out.push_back(detail::read_comparison(*q));
    return out;
  });
}

namespace {

constexpr const char* kFlagViewSelect =
    "SELECT c.repo_id AS repo_id, c.sha AS sha, c.subject AS subject, p.key AS point_key, ";
constexpr const char* kFlagViewFrom =
    " FROM flags f JOIN commits c ON c.id = f.commit_id JOIN points p ON p.id = f.point_id ";

FlagView read_flag_view(const detail::Statement& s) {
  return {detail::read_flag(s), s.get<RepoId>("repo_id"), s.get<std::string>("sha"), s.get<std::string>("subject"),
          s.get<std::string>("point_key")};
}

}  // namespace

Result<FlagView> AnalysisReader::flag(FlagId id) {
  return guard(db_, "read flag", [&] {
    Query q(db_, std::string(kFlagViewSelect) + detail::kFlagColumns + kFlagViewFrom + "WHERE f.id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, "flag " + std::to_string(id) + ": no such flag");
    return read_flag_view(*q);
  });
}

Result<std::vector<FlagView>> AnalysisReader::flags(const FlagFilter& filter) {
  return guard(db_, "list flags", [&] {
    if (filter.limit < 0 || filter.offset < 0) raise(ErrorCode::kInvalidArgument, "limit and offset must be >= 0");
    // Flags are few (hundreds); one statement with optional filters serves all lists.
    Query q(db_, std::string(kFlagViewSelect) + detail::kFlagColumns + kFlagViewFrom +
                     "WHERE (:repo IS NULL OR c.repo_id = :repo) "
                     "AND (:state = 'any' "
                     "  OR (:state = 'open' AND f.ack_at IS NULL AND f.withdrawn_at IS NULL) "
                     "  OR (:state = 'ack' AND f.ack_at IS NOT NULL) "
                     "  OR (:state = 'withdrawn' AND f.withdrawn_at IS NOT NULL)) "
                     "AND (:kind IS NULL OR f.kind = :kind) "
                     "AND (:commit IS NULL OR f.commit_id = :commit) "
                     "AND (:testbed IS NULL OR f.testbed_id = :testbed) "
                     "AND (:variant IS NULL OR f.variant = :variant) "
                     "AND (:point IS NULL OR f.point_id = :point) "
                     "ORDER BY f.id DESC LIMIT :limit OFFSET :offset");
    std::optional<std::string> kind;
    if (filter.kind) kind = std::string(to_string(*filter.kind));
    const char* state = filter.state == FlagState::kAny        ? "any"
                        : filter.state == FlagState::kOpen     ? "open"
                        : filter.state == FlagState::kWithdrawn ? "withdrawn"
                                                                : "ack";
    q->bind(":repo", filter.repo_id)
        .bind(":state", state)
        .bind(":kind", kind)
        .bind(":commit", filter.commit_id)
        .bind(":testbed", filter.testbed_id)
        .bind(":variant", filter.variant)
        .bind(":point", filter.point_id)
        .bind(":limit", filter.limit)
        .bind(":offset", filter.offset);
    std::vector<FlagView> out;
    while (q->step()) out.push_back(read_flag_view(*q));
    return out;
  });
}

}  // namespace perfwatch::store
