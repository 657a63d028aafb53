#include "store/noise_evidence_store.h"

#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

const char* kind_word(EvidenceKind kind) { return kind == EvidenceKind::kAa ? "aa" : "history"; }

std::optional<NoiseEvidencePart> read_part(Database& db, TestbedId testbed, const std::string& variant, PointId point,
                                           bool paired, const std::string& source) {
  Query q(db,
          "SELECT kind, sum_sq_log, df, runs FROM noise_evidence_parts WHERE testbed_id = :testbed "
          "AND variant = :variant AND point_id = :point AND paired = :paired AND source = :source");
  q->bind(":testbed", testbed).bind(":variant", variant).bind(":point", point).bind(":paired", paired).bind(
      ":source", source);
  if (!q->step()) return std::nullopt;
  NoiseEvidencePart p;
  p.testbed_id = testbed;
  p.variant = variant;
  p.point_id = point;
  p.paired = paired;
  p.source = source;
  p.kind = q->get<std::string>("kind") == "aa" ? EvidenceKind::kAa : EvidenceKind::kHistory;
  p.sum_sq_log = q->get<double>("sum_sq_log");
  p.df = q->get<double>("df");
  p.runs = q->get<std::int64_t>("runs");
  return p;
}

// Adds sign * the part to its kind's sums.
void add_to_totals(Database& db, const NoiseEvidencePart& p, double sign, std::int64_t parts, UnixSeconds now) {
  Query q(db,
          "INSERT INTO noise_evidence_totals (testbed_id, variant, point_id, paired, kind, sum_sq_log, df, runs, "
          "  parts, updated_at) "
          "VALUES (:testbed, :variant, :point, :paired, :kind, :sum, :df, :runs, :parts, :now) "
          "ON CONFLICT (testbed_id, variant, point_id, paired, kind) DO UPDATE SET "
          "  sum_sq_log = max(0, sum_sq_log + excluded.sum_sq_log), df = max(0, df + excluded.df), "
          "  runs = runs + excluded.runs, parts = parts + excluded.parts, updated_at = excluded.updated_at");
  q->bind(":testbed", p.testbed_id)
      .bind(":variant", p.variant)
      .bind(":point", p.point_id)
      .bind(":paired", p.paired)
      .bind(":kind", kind_word(p.kind))
      .bind(":sum", sign * p.sum_sq_log)
      .bind(":df", sign * p.df)
      .bind(":runs", static_cast<std::int64_t>(sign) * p.runs)
      .bind(":parts", parts)
      .bind(":now", now);
  q->run();
}

}  // namespace

Status NoiseEvidenceWriter::put(const NoiseEvidencePart& p) {
  return guard(db_, "put noise evidence " + p.source, [&] {
    if (p.source.empty()) raise(ErrorCode::kInvalidArgument, "noise evidence: source is empty");
    if (!(p.sum_sq_log >= 0) || !(p.df >= 0))
      raise(ErrorCode::kInvalidArgument, "noise evidence " + p.source + ": sum_sq_log and df must be >= 0");
    Transaction tx(db_);
    detail::check(tx.status());
    const UnixSeconds now = db_.now();
    if (auto old = read_part(db_, p.testbed_id, p.variant, p.point_id, p.paired, p.source)) {
      add_to_totals(db_, *old, -1, -1, now);
    }
    {
      Query q(db_,
              "INSERT INTO noise_evidence_parts (testbed_id, variant, point_id, paired, source, kind, sum_sq_log, df, "
              "  runs, updated_at) "
              "VALUES (:testbed, :variant, :point, :paired, :source, :kind, :sum, :df, :runs, :now) "
              "ON CONFLICT (testbed_id, variant, point_id, paired, source) DO UPDATE SET kind = excluded.kind, "
              "  sum_sq_log = excluded.sum_sq_log, df = excluded.df, runs = excluded.runs, "
              "  updated_at = excluded.updated_at");
      q->bind(":testbed", p.testbed_id)
          .bind(":variant", p.variant)
          .bind(":point", p.point_id)
          .bind(":paired", p.paired)
          .bind(":source", p.source)
          .bind(":kind", kind_word(p.kind))
          .bind(":sum", p.sum_sq_log)
          .bind(":df", p.df)
          .bind(":runs", p.runs)
          .bind(":now", now);
      q->run();
    }
    add_to_totals(db_, p, 1, 1, now);
    detail::check(tx.commit());
  });
}

Result<NoiseEvidenceTotals> NoiseEvidenceReader::totals(TestbedId testbed, const std::string& variant, PointId point,
                                                         bool paired) {
  return guard(db_, "read noise evidence", [&] {
    NoiseEvidenceTotals out;
    Query q(db_,
            "SELECT kind, sum_sq_log, df, runs, parts FROM noise_evidence_totals WHERE testbed_id = :testbed "
            "AND variant = :variant AND point_id = :point AND paired = :paired");
    q->bind(":testbed", testbed).bind(":variant", variant).bind(":point", point).bind(":paired", paired);
    while (q->step()) {
      NoiseEvidenceSum& s = q->get<std::string>("kind") == "aa" ? out.aa : out.history;
      s.sum_sq_log = q->get<double>("sum_sq_log");
      s.df = q->get<double>("df");
      s.runs = q->get<std::int64_t>("runs");
      s.parts = q->get<std::int64_t>("parts");
    }
    return out;
  });
}

Result<std::optional<NoiseEvidencePart>> NoiseEvidenceReader::part(TestbedId testbed, const std::string& variant,
                                                                    PointId point, bool paired,
                                                                    const std::string& source) {
  return guard(db_, "read noise evidence " + source,
               [&] { return read_part(db_, testbed, variant, point, paired, source); });
}

}  // namespace perfwatch::store
