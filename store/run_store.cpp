#include "store/run_store.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

std::string id_text(const char* what, RowId id) { return std::string(what) + " " + std::to_string(id); }

// The facts of a manifest stored with a run: one that cannot be read is a
// damaged row (the runner validated it before storing it), not bad input.
Result<ManifestFacts> stored_facts(const nlohmann::json& manifest, const std::string& where) {
  auto facts = manifest_facts(manifest, where);
  if (!facts) return fail(Error{ErrorCode::kInternal, facts.error().where, facts.error().message + " (damaged row)"});
  return facts;
}

// Points in the order they were first stored: a run stores them as it
// measures them, in its sweep's order (the first axis varying fastest), and a
// key string would sort batch=16 before batch=8.
constexpr const char* kPointOrder = "p.id";

}  // namespace

Result<TestbedId> RunWriter::ensure_testbed(const TestbedRecord& t) {
  return guard(db_, "ensure testbed " + t.name, [&] {
    if (t.name.empty()) raise(ErrorCode::kInvalidArgument, "testbed: name is empty");
    Transaction tx(db_);
    detail::check(tx.status());
    Query find(db_, std::string("SELECT ") + detail::kTestbedColumns + " FROM testbeds tb WHERE tb.name = :name");
    find->bind(":name", t.name);
    if (find->step()) {
      auto known = detail::read_testbed(*find);
      if (known.hostname != t.hostname || known.backend != t.backend || known.device_name != t.device_name)
        raise(ErrorCode::kInvalidArgument,
              "testbed " + t.name + ": known as " + known.hostname + "/" + std::string(to_string(known.backend)) +
                  "/" + known.device_name + ", now " + t.hostname + "/" + std::string(to_string(t.backend)) + "/" +
                  t.device_name + "; noise is per testbed, so give this machine another name");
      return known.id;
    }
    Query q(db_,
            "INSERT INTO testbeds (name, hostname, backend, device_name, created_at) "
            "VALUES (:name, :hostname, :backend, :device, :now) RETURNING id");
    q->bind(":name", t.name)
        .bind(":hostname", t.hostname)
        .bind(":backend", to_string(t.backend))
        .bind(":device", t.device_name)
        .bind(":now", db_.now());
    TestbedId id = q->returning<TestbedId>("id");
    detail::check(tx.commit());
    return id;
  });
}

Result<BuildId> RunWriter::add_build(const BuildRecord& b) {
  return guard(db_, "add build", [&] {
    Query q(db_,
            "INSERT INTO builds (commit_id, status, command, exit_code, duration_s, log_tail, log_path, toolchain, "
            "  started_at, finished_at) "
            "VALUES (:commit, :status, :command, :exit_code, :duration_s, :log_tail, :log_path, :toolchain, "
            "  :started_at, :finished_at) RETURNING id");
    q->bind(":commit", b.commit_id)
        .bind(":status", to_string(b.status))
        .bind(":command", b.command)
        .bind(":exit_code", b.exit_code)
        .bind(":duration_s", b.duration_s)
        .bind(":log_tail", b.log_tail)
        .bind(":log_path", b.log_path)
        .bind(":toolchain", b.toolchain)
        .bind(":started_at", b.started_at != 0 ? b.started_at : db_.now())
        .bind(":finished_at", b.finished_at);
    return q->returning<BuildId>("id");
  });
}

Result<RunId> RunWriter::start_run(const RunRecord& r) {
  return guard(db_, "start run", [&] {
    Query q(db_,
            "INSERT INTO runs (commit_id, build_id, testbed_id, job_id, kind, purpose, status, exit_code, signal, "
            "  message, stdout_tail, stderr_tail, log_path, started_at, finished_at, wall_s, seed, provenance_json, "
            "  manifest_json, placement_json, device_uuid) "
            "VALUES (:commit, :build, :testbed, :job, :kind, :purpose, :status, :exit_code, :signal, :message, "
            "  :stdout_tail, :stderr_tail, :log_path, :started_at, :finished_at, :wall_s, :seed, :provenance, "
            "  :manifest, :placement, :device_uuid) RETURNING id");
    q->bind(":commit", r.commit_id)
        .bind(":build", r.build_id)
        .bind(":testbed", r.testbed_id)
        .bind(":job", r.job_id)
        .bind(":kind", to_string(r.kind))
        .bind(":purpose", r.purpose)
        .bind(":status", to_string(r.status))
        .bind(":exit_code", r.exit_code)
        .bind(":signal", r.signal)
        .bind(":message", r.message)
        .bind(":stdout_tail", r.stdout_tail)
        .bind(":stderr_tail", r.stderr_tail)
        .bind(":log_path", r.log_path)
        .bind(":started_at", r.started_at != 0 ? r.started_at : db_.now())
        .bind(":finished_at", r.finished_at)
        .bind(":wall_s", r.wall_s)
        .bind(":seed", r.seed)
        .bind(":provenance", r.provenance)
        .bind(":manifest", r.manifest)
        .bind(":placement", r.placement)
        .bind(":device_uuid", r.device_uuid);
    return q->returning<RunId>("id");
  });
}

Status RunWriter::set_placement(RunId run, const nlohmann::json& placement, const std::string& device_uuid) {
  return guard(db_, "set placement of run " + std::to_string(run), [&] {
    Query q(db_,
            "UPDATE runs SET placement_json = json_patch(placement_json, :placement), "
            "  device_uuid = CASE WHEN :uuid = '' THEN device_uuid ELSE :uuid END WHERE id = :id");
    q->bind(":placement", placement).bind(":uuid", device_uuid).bind(":id", run);
    q->run();
  });
}

Status RunWriter::set_provenance(RunId run, std::optional<TestbedId> testbed, const nlohmann::json& provenance,
                                 std::optional<std::int64_t> seed) {
  return guard(db_, "set provenance of " + id_text("run", run), [&] {
    Query q(db_,
            "UPDATE runs SET testbed_id = coalesce(:testbed, testbed_id), provenance_json = :provenance, "
            "  seed = coalesce(:seed, seed) WHERE id = :id");
    q->bind(":testbed", testbed).bind(":provenance", provenance).bind(":seed", seed).bind(":id", run);
    q->run();
    if (q->changes() == 0) raise(ErrorCode::kNotFound, id_text("run", run) + ": no such run");
  });
}

Result<VariantId> RunWriter::add_variant(const VariantRecord& v) {
  return guard(db_, "add variant " + v.name + " to " + id_text("run", v.run_id), [&] {
    if (v.name.empty()) raise(ErrorCode::kInvalidArgument, "variant: name is empty");
    Query q(db_,
            "INSERT INTO run_variants (run_id, name, params_json, is_baseline, status, reason, resources_json) "
            "VALUES (:run, :name, :params, :baseline, :status, :reason, :resources) RETURNING id");
    q->bind(":run", v.run_id)
        .bind(":name", v.name)
        .bind(":params", v.params)
        .bind(":baseline", v.is_baseline)
        .bind(":status", to_string(v.status))
        .bind(":reason", v.reason)
        .bind(":resources", v.resources);
    return q->returning<VariantId>("id");
  });
}

Result<PointId> RunWriter::ensure_point(const PointRecord& p) {
  return guard(db_, "ensure point " + p.key, [&] {
    if (p.key.empty()) raise(ErrorCode::kInvalidArgument, "point: key is empty");
    // Points are read far more than written: look first, insert only if new.
    // The unique key makes a racing insert fail rather than duplicate.
    Query find(db_, std::string("SELECT ") + detail::kPointColumns + " FROM points p WHERE p.key = :key");
    find->bind(":key", p.key);
    if (!p.axes.is_object()) raise(ErrorCode::kInvalidArgument, "point " + p.key + ": axes must be a JSON object");
    const std::string label = p.label.empty() ? p.key : p.label;
    if (find->step()) {
      auto known = detail::read_point(*find);
      // The same key is the same coordinates; a manifest that renamed its
      // label renames the point for every reader from now on.
      if (known.label != label) {
        Query rename(db_, "UPDATE points SET label = :label WHERE id = :id");
        rename->bind(":label", label).bind(":id", known.id);
        rename->run();
      }
      return known.id;
    }
    Query q(db_, "INSERT INTO points (key, label, axes_json) VALUES (:key, :label, :axes) RETURNING id");
    q->bind(":key", p.key).bind(":label", label).bind(":axes", p.axes.dump());
    return q->returning<PointId>("id");
  });
}

Status RunWriter::record_check(const CheckRecord& c) {
  return guard(db_, "record check of " + id_text("run", c.run_id), [&] {
    Query q(db_,
            "INSERT INTO checks (run_id, variant_id, point_id, status, reason, rel_l2_o, max_abs_lse, detail_json) "
            "VALUES (:run, :variant, :point, :status, :reason, :rel_l2_o, :max_abs_lse, :detail) "
            "ON CONFLICT (run_id, variant_id, point_id) DO UPDATE SET status = excluded.status, "
            "  reason = excluded.reason, rel_l2_o = excluded.rel_l2_o, max_abs_lse = excluded.max_abs_lse, "
            "  detail_json = excluded.detail_json");
    q->bind(":run", c.run_id)
        .bind(":variant", c.variant_id)
        .bind(":point", c.point_id)
        .bind(":status", to_string(c.status))
        .bind(":reason", c.reason)
        .bind(":rel_l2_o", c.rel_l2_o)
        .bind(":max_abs_lse", c.max_abs_lse)
        .bind(":detail", c.detail);
    q->run();
  });
}

namespace {

constexpr const char* kInsertTrial =
    "INSERT INTO trials (run_id, variant_id, point_id, trial_no, metrics_json, steps, sm_clock_mhz, throttled) "
    "VALUES (:run, :variant, :point, :trial_no, :metrics, :steps, :sm_clock_mhz, :throttled)";

void insert_one(Database& db, const TrialRecord& t) {
  if (t.metrics.empty()) raise(ErrorCode::kInvalidArgument, "trial " + std::to_string(t.trial_no) + ": no metric");
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, value] : t.metrics) {
    if (!(value > 0) || !std::isfinite(value))
      raise(ErrorCode::kInvalidArgument, "trial " + std::to_string(t.trial_no) + ": metrics." + name + ": must be a finite number > 0");
    metrics[name] = value;
  }
  Query q(db, kInsertTrial);
  q->bind(":run", t.run_id)
      .bind(":variant", t.variant_id)
      .bind(":point", t.point_id)
      .bind(":trial_no", t.trial_no)
      .bind(":metrics", metrics)
      .bind(":steps", t.steps)
      .bind(":sm_clock_mhz", t.sm_clock_mhz)
      .bind(":throttled", t.throttled);
  q->run();
}

}  // namespace

Status RunWriter::insert_trial(const TrialRecord& t) {
  // Autocommit: one statement is one transaction, in the WAL when this returns.
  return guard(db_, "insert trial", [&] { insert_one(db_, t); });
}

Status RunWriter::insert_trials(std::span<const TrialRecord> trials) {
  return guard(db_, "insert trials", [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    for (const auto& t : trials) insert_one(db_, t);
    detail::check(tx.commit());
  });
}

Status RunWriter::finish_run(RunId run, const RunOutcome& o) {
  return guard(db_, "finish " + id_text("run", run), [&] {
    if (o.status == RunStatus::kRunning) raise(ErrorCode::kInvalidArgument, "a finished run cannot be running");
    Transaction tx(db_);
    detail::check(tx.status());
    Query q(db_,
            "UPDATE runs SET status = :status, exit_code = :exit_code, signal = :signal, message = :message, "
            "  stdout_tail = :stdout_tail, stderr_tail = :stderr_tail, wall_s = :wall_s, finished_at = :finished_at, "
            "  trial_count = (SELECT count(*) FROM trials WHERE run_id = :id) "
            "WHERE id = :id AND status = 'running'");
    q->bind(":status", to_string(o.status))
        .bind(":exit_code", o.exit_code)
        .bind(":signal", o.signal)
        .bind(":message", o.message)
        .bind(":stdout_tail", o.stdout_tail)
        .bind(":stderr_tail", o.stderr_tail)
        .bind(":wall_s", o.wall_s)
        .bind(":finished_at", o.finished_at.value_or(db_.now()))
        .bind(":id", run);
    q->run();
    if (q->changes() == 0) {
      Query status(db_, "SELECT status FROM runs WHERE id = :id");
      status->bind(":id", run);
      if (!status->step()) raise(ErrorCode::kNotFound, id_text("run", run) + ": no such run");
      raise(ErrorCode::kInvalidArgument,
            id_text("run", run) + ": is " + status->get<std::string>("status") + ", not running");
    }
    detail::check(tx.commit());
  });
}

// ---------------------------------------------------------------- reads

Result<std::vector<TestbedRecord>> RunReader::testbeds() {
  return guard(db_, "list testbeds", [&] {
    Query q(db_, std::string("SELECT ") + detail::kTestbedColumns + " FROM testbeds tb ORDER BY tb.id");
    std::vector<TestbedRecord> out;
    while (q->step()) out.push_back(detail::read_testbed(*q));
    return out;
  });
}

Result<std::optional<TestbedRecord>> RunReader::testbed_named(const std::string& name) {
  return guard(db_, "read testbed " + name, [&]() -> std::optional<TestbedRecord> {
    Query q(db_, std::string("SELECT ") + detail::kTestbedColumns + " FROM testbeds tb WHERE tb.name = :name");
    q->bind(":name", name);
    if (!q->step()) return std::nullopt;
    return detail::read_testbed(*q);
  });
}

Result<TestbedRecord> RunReader::testbed(TestbedId id) {
  return guard(db_, "read testbed", [&] {
    Query q(db_, std::string("SELECT ") + detail::kTestbedColumns + " FROM testbeds tb WHERE tb.id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, id_text("testbed", id) + ": no such testbed");
    return detail::read_testbed(*q);
  });
}

Result<BuildRecord> RunReader::build(BuildId id) {
  return guard(db_, "read build", [&] {
    Query q(db_, std::string("SELECT ") + detail::kBuildColumns + " FROM builds bd WHERE bd.id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, id_text("build", id) + ": no such build");
    return detail::read_build(*q);
  });
}

Result<std::vector<BuildRecord>> RunReader::builds_of_commit(CommitId commit) {
  return guard(db_, "list builds", [&] {
    Query q(db_, std::string("SELECT ") + detail::kBuildColumns +
                     " FROM builds bd WHERE bd.commit_id = :commit ORDER BY bd.id");
    q->bind(":commit", commit);
    std::vector<BuildRecord> out;
    while (q->step()) out.push_back(detail::read_build(*q));
    return out;
  });
}

Result<RunRecord> RunReader::run(RunId id) {
  return guard(db_, "read run", [&] {
    Query q(db_, std::string("SELECT ") + detail::kRunColumns + " FROM runs r WHERE r.id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, id_text("run", id) + ": no such run");
    return detail::read_run(*q);
  });
}

Result<ManifestFacts> RunReader::manifest_facts(RunId id) {
  auto manifest = guard(db_, "read run manifest", [&] {
    Query q(db_, "SELECT manifest_json FROM runs WHERE id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, id_text("run", id) + ": no such run");
    return q->get<nlohmann::json>("manifest_json");
  });
  if (!manifest) return fail(manifest.error());
  return stored_facts(*manifest, id_text("run", id) + " manifest");
}

Result<ManifestFacts> RunReader::manifest_facts_of_commit(CommitId commit) {
  // The newest run that stored one: a later manifest may have changed the
  // metric or the variants.
  std::optional<RunId> run;
  auto manifest = guard(db_, "read commit manifest", [&] {
    Query q(db_,
            "SELECT id, manifest_json FROM runs WHERE commit_id = :commit AND manifest_json <> '{}' "
            "ORDER BY id DESC LIMIT 1");
    q->bind(":commit", commit);
    if (!q->step()) return nlohmann::json::object();
    run = q->get<RunId>("id");
    return q->get<nlohmann::json>("manifest_json");
  });
  if (!manifest) return fail(manifest.error());
  return stored_facts(*manifest, run ? id_text("run", *run) + " manifest" : std::string());
}

Result<std::vector<RunRecord>> RunReader::runs_of_commit(CommitId commit) {
  return guard(db_, "list runs", [&] {
    Query q(db_, std::string("SELECT ") + detail::kRunColumns + " FROM runs r WHERE r.commit_id = :commit ORDER BY r.id");
    q->bind(":commit", commit);
    std::vector<RunRecord> out;
    while (q->step()) out.push_back(detail::read_run(*q));
    return out;
  });
}

Result<std::int64_t> RunReader::trial_count(RunId run) {
  return guard(db_, "count trials", [&] {
    Query q(db_, "SELECT count(*) AS n FROM trials WHERE run_id = :run");
    q->bind(":run", run);
    q->step();
    return q->get<std::int64_t>("n");
  });
}

Result<std::vector<VariantRecord>> RunReader::variants(RunId run) {
  return guard(db_, "list variants", [&] {
    Query q(db_, std::string("SELECT ") + detail::kVariantColumns +
                     " FROM run_variants v WHERE v.run_id = :run ORDER BY v.is_baseline DESC, v.id");
    q->bind(":run", run);
    std::vector<VariantRecord> out;
    while (q->step()) out.push_back(detail::read_variant(*q));
    return out;
  });
}

Result<std::vector<PointRecord>> RunReader::points() {
  return guard(db_, "list points", [&] {
    Query q(db_, std::string("SELECT ") + detail::kPointColumns + " FROM points p ORDER BY " + kPointOrder);
    std::vector<PointRecord> out;
    while (q->step()) out.push_back(detail::read_point(*q));
    return out;
  });
}

Result<PointRecord> RunReader::point(PointId id) {
  return guard(db_, "read point", [&] {
    Query q(db_, std::string("SELECT ") + detail::kPointColumns + " FROM points p WHERE p.id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, id_text("point", id) + ": no such point");
    return detail::read_point(*q);
  });
}

Result<std::optional<PointRecord>> RunReader::find_point(std::string_view key) {
  return guard(db_, "find point", [&]() -> std::optional<PointRecord> {
    Query q(db_, std::string("SELECT ") + detail::kPointColumns + " FROM points p WHERE p.key = :key");
    q->bind(":key", key);
    if (!q->step()) return std::nullopt;
    return detail::read_point(*q);
  });
}

Result<std::vector<CheckRecord>> RunReader::checks(RunId run) {
  return guard(db_, "list checks", [&] {
    Query q(db_, std::string("SELECT ") + detail::kCheckColumns +
                     " FROM checks ck WHERE ck.run_id = :run ORDER BY ck.variant_id, ck.point_id");
    q->bind(":run", run);
    std::vector<CheckRecord> out;
    while (q->step()) out.push_back(detail::read_check(*q));
    return out;
  });
}

Result<std::vector<TrialRecord>> RunReader::trials(RunId run, std::optional<VariantId> variant,
                                                   std::optional<PointId> point) {
  return guard(db_, "list trials", [&] {
    Query q(db_, std::string("SELECT ") + detail::kTrialColumns +
                     " FROM trials t WHERE t.run_id = :run "
                     "AND (:variant IS NULL OR t.variant_id = :variant) AND (:point IS NULL OR t.point_id = :point) "
                     "ORDER BY t.variant_id, t.point_id, t.trial_no");
    q->bind(":run", run).bind(":variant", variant).bind(":point", point);
    std::vector<TrialRecord> out;
    while (q->step()) out.push_back(detail::read_trial(*q));
    return out;
  });
}

Result<std::vector<SummaryRecord>> RunReader::summaries(RunId run) {
  return guard(db_, "list summaries", [&] {
    Query q(db_, std::string("SELECT ") + detail::kSummaryColumns +
                     " FROM summaries s WHERE s.run_id = :run ORDER BY s.variant_id, s.point_id, s.metric");
    q->bind(":run", run);
    std::vector<SummaryRecord> out;
    while (q->step()) out.push_back(detail::read_summary(*q));
    return out;
  });
}

Result<RunTable> RunReader::table(RunId run) {
  return guard(db_, "read table of " + id_text("run", run), [&] {
    // One snapshot: the run may be writing trials right now.
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    RunTable table;
    table.run = *[&] {
      auto r = this->run(run);
      detail::check(r);
      return r;
    }();
    auto variants = this->variants(run);
    detail::check(variants);
    table.variants = std::move(*variants);

    std::map<std::pair<VariantId, PointId>, RunTableCell> cells;
    auto cell = [&](VariantId v, PointId p) -> RunTableCell& {
      auto& c = cells[{v, p}];
      c.variant_id = v;
      c.point_id = p;
      return c;
    };
    {
      Query q(db_, std::string("SELECT ") + detail::kSummaryColumns + " FROM summaries s WHERE s.run_id = :run");
      q->bind(":run", run);
      while (q->step()) {
        auto s = detail::read_summary(*q);
        auto& c = cell(s.variant_id, s.point_id);
        if (s.judged) c.summary = s;
        c.metrics[s.metric] = std::move(s);
      }
    }
    {
      Query q(db_, std::string("SELECT ") + detail::kCheckColumns + " FROM checks ck WHERE ck.run_id = :run");
      q->bind(":run", run);
      while (q->step()) {
        auto c = detail::read_check(*q);
        cell(c.variant_id, c.point_id).check = std::move(c);
      }
    }
    {
      Query q(db_,
              "SELECT variant_id, point_id, count(*) AS n FROM trials WHERE run_id = :run "
              "GROUP BY variant_id, point_id");
      q->bind(":run", run);
      while (q->step())
        cell(q->get<VariantId>("variant_id"), q->get<PointId>("point_id")).trials = q->get<std::int64_t>("n");
    }
    {
      Query q(db_, std::string("SELECT ") + detail::kPointColumns +
                       " FROM points p WHERE p.id IN (SELECT point_id FROM checks WHERE run_id = :run "
                       "UNION SELECT point_id FROM summaries WHERE run_id = :run "
                       "UNION SELECT DISTINCT point_id FROM trials WHERE run_id = :run) ORDER BY " +
                       kPointOrder);
      q->bind(":run", run);
      while (q->step()) table.points.push_back(detail::read_point(*q));
    }
    for (auto& [key, c] : cells) table.cells.push_back(std::move(c));
    return table;
  });
}

Result<std::vector<RunPairRow>> RunReader::compare_runs(RunId a, RunId b) {
  return guard(db_, "compare " + id_text("run", a) + " with " + id_text("run", b), [&] {
    Transaction tx(db_, Transaction::Mode::kDeferred);
    detail::check(tx.status());
    for (RunId id : {a, b}) detail::check(this->run(id));
    // Keyed by variant name and the point's place in the sweep order.
    std::map<std::tuple<std::string, std::int64_t>, RunPairRow> rows;
    std::map<PointId, std::int64_t> order;
    {
      Query q(db_, std::string("SELECT ") + detail::kPointColumns + " FROM points p WHERE p.id IN "
                       "(SELECT point_id FROM summaries WHERE run_id IN (:a, :b) AND judged = 1) ORDER BY " + kPointOrder);
      q->bind(":a", a).bind(":b", b);
      std::vector<PointRecord> points;
      while (q->step()) points.push_back(detail::read_point(*q));
      for (std::size_t i = 0; i < points.size(); ++i) order[points[i].id] = static_cast<std::int64_t>(i);
      for (RunId run : {a, b}) {
        Query s(db_, std::string("SELECT v.name AS variant, ") + detail::kSummaryColumns +
                         " FROM summaries s JOIN run_variants v ON v.id = s.variant_id WHERE s.run_id = :run "
                         "AND s.judged = 1");
        s->bind(":run", run);
        while (s->step()) {
          auto summary = detail::read_summary(*s);
          auto idx = order.at(summary.point_id);
          auto& row = rows[{s->get<std::string>("variant"), idx}];
          row.variant = s->get<std::string>("variant");
          row.point = points[static_cast<std::size_t>(idx)];
          (run == a ? row.a : row.b) = std::move(summary);
        }
      }
    }
    std::vector<RunPairRow> out;
    for (auto& [key, row] : rows) {
      if (row.a && row.b && row.a->median && row.b->median && *row.a->median != 0)
        row.ratio = *row.b->median / *row.a->median;
      out.push_back(std::move(row));
    }
    return out;
  });
}

}  // namespace perfwatch::store
