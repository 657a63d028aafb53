#include "store/experiment_store.h"

#include <charconv>

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

void insert_ref(Database& db, ExperimentId experiment, const ExperimentRef& ref) {
  if (!ref.commit_id && !ref.run_id) raise(ErrorCode::kInvalidArgument, "experiment ref: names no commit and no run");
  Query q(db,
          "INSERT INTO experiment_refs (experiment_id, commit_id, run_id, role) VALUES (:e, :commit, :run, :role) "
          "ON CONFLICT DO NOTHING");
  q->bind(":e", experiment).bind(":commit", ref.commit_id).bind(":run", ref.run_id).bind(":role", ref.role);
  q->run();
}

std::vector<ExperimentRef> read_refs(Database& db, ExperimentId experiment) {
  Query q(db,
          "SELECT commit_id, run_id, role FROM experiment_refs WHERE experiment_id = :e "
          "ORDER BY role, commit_id, run_id");
  q->bind(":e", experiment);
  std::vector<ExperimentRef> out;
  while (q->step())
    out.push_back({q->get<std::optional<CommitId>>("commit_id"), q->get<std::optional<RunId>>("run_id"),
                   q->get<std::string>("role")});
  return out;
}

void require_experiment(Database& db, ExperimentId id) {
  Query q(db, "SELECT 1 AS found FROM experiments WHERE id = :id");
  q->bind(":id", id);
  if (!q->step()) raise(ErrorCode::kNotFound, "experiment " + std::to_string(id) + ": no such experiment");
}

void touch(Database& db, ExperimentId id) {
  Query q(db, "UPDATE experiments SET updated_at = :now WHERE id = :id");
  q->bind(":now", db.now()).bind(":id", id);
  q->run();
}

// User words -> an FTS5 query: each word a quoted prefix phrase, so that
// punctuation ("num_warps=8", "C64") is text to find, never query syntax.
std::optional<std::string> fts_query(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && !isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (start == i) break;
    if (!out.empty()) out += ' ';
    out += '"';
    for (char ch : text.substr(start, i - start)) {
      if (ch == '"') out += '"';
      out += ch;
    }
    out += "\"*";
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool valid_param_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char ch : name)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
}

// A param value as JSON would hold it: json_extract gives integers, reals,
// 1/0 for true/false, and text.
void bind_param_value(detail::Statement& s, const std::string& name, const std::string& value) {
  std::int64_t i = 0;
  auto [iend, iec] = std::from_chars(value.data(), value.data() + value.size(), i);
  if (iec == std::errc() && iend == value.data() + value.size() && !value.empty()) {
    s.bind(name, i);
    return;
  }
  double d = 0;
  auto [dend, dec] = std::from_chars(value.data(), value.data() + value.size(), d);
  if (dec == std::errc() && dend == value.data() + value.size() && !value.empty()) {
    s.bind(name, d);
    return;
  }
  if (value == "true" || value == "false") {
    s.bind(name, static_cast<std::int64_t>(value == "true"));
    return;
  }
  s.bind(name, value);
}

}  // namespace

Result<ExperimentId> ExperimentWriter::put_experiment(const ExperimentRecord& e) {
  return guard(db_, "put experiment", [&] {
    if (e.hypothesis.empty()) raise(ErrorCode::kInvalidArgument, "experiment: hypothesis is empty");
    if (!e.candidates.is_array()) raise(ErrorCode::kInvalidArgument, "experiment: candidates must be a JSON array");
    Transaction tx(db_);
    detail::check(tx.status());
    ExperimentId id = 0;
    if (!e.ident.empty()) {
      Query find(db_, "SELECT id FROM experiments WHERE ident = :ident");
      find->bind(":ident", e.ident);
      if (find->step()) id = find->get<ExperimentId>("id");
    }
    if (id != 0) {
      Query q(db_,
              "UPDATE experiments SET repo_id = coalesce(:repo, repo_id), hypothesis = :hypothesis, "
              "  source = :source, group_key = :group, metric = :metric, testbed_id = coalesce(:testbed, testbed_id), "
              "  baseline_json = :baseline, candidates_json = :candidates, verdict = :verdict, "
              "  conclusion = CASE WHEN :conclusion = '' THEN conclusion ELSE :conclusion END, updated_at = :now "
              "WHERE id = :id");
      q->bind(":repo", e.repo_id)
          .bind(":hypothesis", e.hypothesis)
          .bind(":source", to_string(e.source))
          .bind(":group", e.group_key)
          .bind(":metric", e.metric)
          .bind(":testbed", e.testbed_id)
          .bind(":baseline", e.baseline)
          .bind(":candidates", e.candidates)
          .bind(":verdict", to_string(e.verdict))
          .bind(":conclusion", e.conclusion)
          .bind(":now", db_.now())
          .bind(":id", id);
      q->run();
    } else {
      Query q(db_,
              "INSERT INTO experiments (ident, repo_id, hypothesis, source, group_key, metric, testbed_id, "
              "  baseline_json, candidates_json, verdict, conclusion, created_at, updated_at) "
              "VALUES (:ident, :repo, :hypothesis, :source, :group, :metric, :testbed, :baseline, :candidates, "
              "  :verdict, :conclusion, :created, :now) RETURNING id");
      std::optional<std::string> ident;
      if (!e.ident.empty()) ident = e.ident;
      UnixSeconds now = db_.now();
      q->bind(":ident", ident)
          .bind(":repo", e.repo_id)
          .bind(":hypothesis", e.hypothesis)
          .bind(":source", to_string(e.source))
          .bind(":group", e.group_key)
          .bind(":metric", e.metric)
          .bind(":testbed", e.testbed_id)
          .bind(":baseline", e.baseline)
          .bind(":candidates", e.candidates)
          .bind(":verdict", to_string(e.verdict))
          .bind(":conclusion", e.conclusion)
          .bind(":created", e.created_at != 0 ? e.created_at : now)
          .bind(":now", now);
      id = q->returning<ExperimentId>("id");
    }
    for (const auto& ref : e.refs) insert_ref(db_, id, ref);
    detail::check(tx.commit());
    return id;
  });
}

Status ExperimentWriter::set_evidence(ExperimentId experiment, std::span<const EvidenceRecord> evidence) {
  return guard(db_, "set evidence of experiment " + std::to_string(experiment), [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    require_experiment(db_, experiment);
    {
      Query q(db_, "DELETE FROM experiment_evidence WHERE experiment_id = :e");
      q->bind(":e", experiment);
      q->run();
    }
    for (const auto& ev : evidence) {
      Query q(db_,
              "INSERT INTO experiment_evidence (experiment_id, candidate, point_id, baseline_value, candidate_value, "
              "  delta_rel, band_rel, band_calibrated, p_value, runs, verdict) "
              "VALUES (:e, :candidate, :point, :baseline, :value, :delta, :band, :calibrated, :p, :runs, :verdict)");
      q->bind(":e", experiment)
          .bind(":candidate", ev.candidate)
          .bind(":point", ev.point_id)
          .bind(":baseline", ev.baseline_value)
          .bind(":value", ev.candidate_value)
          .bind(":delta", ev.delta_rel)
          .bind(":band", ev.band_rel)
          .bind(":calibrated", ev.band_calibrated)
          .bind(":p", ev.p_value)
          .bind(":runs", ev.runs)
          .bind(":verdict", to_string(ev.verdict));
      q->run();
    }
    touch(db_, experiment);
    detail::check(tx.commit());
  });
}

Status ExperimentWriter::conclude(ExperimentId experiment, std::optional<ExperimentVerdict> verdict,
                                  std::string_view conclusion) {
  return guard(db_, "conclude experiment " + std::to_string(experiment), [&] {
    std::optional<std::string> word;
    if (verdict) word = std::string(to_string(*verdict));
    Query q(db_,
            "UPDATE experiments SET verdict = coalesce(:verdict, verdict), conclusion = :conclusion, "
            "  updated_at = :now WHERE id = :id");
    q->bind(":verdict", word).bind(":conclusion", conclusion).bind(":now", db_.now()).bind(":id", experiment);
    q->run();
    if (q->changes() == 0)
      raise(ErrorCode::kNotFound, "experiment " + std::to_string(experiment) + ": no such experiment");
  });
}

Status ExperimentWriter::add_ref(ExperimentId experiment, const ExperimentRef& ref) {
  return guard(db_, "add ref to experiment " + std::to_string(experiment), [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    require_experiment(db_, experiment);
    insert_ref(db_, experiment, ref);
    detail::check(tx.commit());
  });
}

// ---------------------------------------------------------------- reads

Result<std::vector<ExperimentRecord>> ExperimentReader::search(const ExperimentFilter& f) {
  return guard(db_, "search experiments", [&] {
    if (f.limit < 0 || f.offset < 0) raise(ErrorCode::kInvalidArgument, "limit and offset must be >= 0");
    std::string sql = std::string("SELECT ") + detail::kExperimentColumns +
                      " FROM experiments e "
                      "WHERE (:verdict IS NULL OR e.verdict = :verdict) "
                      "AND (:source IS NULL OR e.source = :source) "
                      "AND (:group = '' OR e.group_key = :group) "
                      "AND (:repo IS NULL OR e.repo_id = :repo) "
                      "AND (:testbed IS NULL OR e.testbed_id = :testbed) "
                      "AND (:since IS NULL OR e.created_at >= :since) "
                      "AND (:until IS NULL OR e.created_at < :until) "
                      "AND (:commit IS NULL OR e.id IN "
                      "  (SELECT experiment_id FROM experiment_refs WHERE commit_id = :commit)) "
                      "AND (:match IS NULL OR e.id IN "
                      "  (SELECT rowid FROM experiments_fts WHERE experiments_fts MATCH :match)) ";
    // One candidate must carry every name=value asked for.
    if (!f.params.empty()) {
      sql += "AND EXISTS (SELECT 1 FROM json_each(e.candidates_json) AS cand WHERE 1";
      for (std::size_t i = 0; i < f.params.size(); ++i) {
        if (!valid_param_name(f.params[i].first))
          raise(ErrorCode::kInvalidArgument,
                "param '" + f.params[i].first + "': a name is letters, digits and _");
        auto n = std::to_string(i);
        sql += " AND json_extract(cand.value, '$.params.' || :pk" + n + ") = :pv" + n;
      }
      sql += ") ";
    }
    sql += "ORDER BY e.created_at DESC, e.id DESC LIMIT :limit OFFSET :offset";
    Query q(db_, sql);
    std::optional<std::string> verdict, source;
    if (f.verdict) verdict = std::string(to_string(*f.verdict));
    if (f.source) source = std::string(to_string(*f.source));
    q->bind(":verdict", verdict)
        .bind(":source", source)
        .bind(":group", f.group_key)
        .bind(":repo", f.repo_id)
        .bind(":testbed", f.testbed_id)
        .bind(":since", f.since)
        .bind(":until", f.until)
        .bind(":commit", f.commit_id)
        .bind(":match", fts_query(f.text))
        .bind(":limit", f.limit)
        .bind(":offset", f.offset);
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      auto n = std::to_string(i);
      q->bind(":pk" + n, f.params[i].first);
      bind_param_value(*q, ":pv" + n, f.params[i].second);
    }
    std::vector<ExperimentRecord> out;
    while (q->step()) out.push_back(detail::read_experiment(*q));
    for (auto& e : out) e.refs = read_refs(db_, e.id);
    return out;
  });
}

Result<ExperimentDetail> ExperimentReader::experiment(ExperimentId id) {
  return guard(db_, "read experiment " + std::to_string(id), [&] {
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    ExperimentDetail out;
    {
      Query q(db_, std::string("SELECT ") + detail::kExperimentColumns + " FROM experiments e WHERE e.id = :id");
      q->bind(":id", id);
      if (!q->step()) raise(ErrorCode::kNotFound, "experiment " + std::to_string(id) + ": no such experiment");
      out.experiment = detail::read_experiment(*q);
    }
    out.experiment.refs = read_refs(db_, id);
    Query q(db_, std::string("SELECT p.key AS point_key, p.label AS point_label, ") + detail::kEvidenceColumns +
                     " FROM experiment_evidence ev JOIN points p ON p.id = ev.point_id WHERE ev.experiment_id = :id "
                     "ORDER BY ev.candidate, p.id");
    q->bind(":id", id);
    while (q->step())
      out.evidence.push_back(
          {detail::read_evidence(*q), q->get<std::string>("point_key"), q->get<std::string>("point_label")});
    return out;
  });
}

Result<std::optional<ExperimentRecord>> ExperimentReader::find_by_ident(std::string_view ident) {
  return guard(db_, "find experiment", [&]() -> std::optional<ExperimentRecord> {
    Query q(db_, std::string("SELECT ") + detail::kExperimentColumns + " FROM experiments e WHERE e.ident = :ident");
    q->bind(":ident", ident);
    if (!q->step()) return std::nullopt;
    auto e = detail::read_experiment(*q);
    e.refs = read_refs(db_, e.id);
    return e;
  });
}

}  // namespace perfwatch::store
