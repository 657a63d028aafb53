#include "store/process_store.h"

#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;

Status ProcessStore::set_run_owner(RunId run, const ProcessOwner& owner) {
  return guard(db_, "set owner of run " + std::to_string(run), [&] {
    Query q(db_,
            "UPDATE runs SET owner_pid = :pid, owner_start_ticks = :ticks, owner_boot_id = :boot, owner_host = :host "
            "WHERE id = :id");
    q->bind(":pid", owner.pid)
        .bind(":ticks", static_cast<std::int64_t>(owner.start_ticks))
        .bind(":boot", owner.boot_id)
        .bind(":host", owner.host)
        .bind(":id", run);
    q->run();
    if (q->changes() == 0) detail::raise(ErrorCode::kNotFound, "run " + std::to_string(run) + ": no such run");
  });
}

Result<std::vector<RunId>> ProcessStore::cut_off_orphaned_runs(const std::string& host, const std::string& boot_id,
                                                               const std::function<bool(const ProcessOwner&)>& alive) {
  return guard(db_, "cut off runs whose process died", [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    std::vector<std::pair<RunId, ProcessOwner>> candidates;
    {
      Query q(db_,
              "SELECT id, owner_pid, owner_start_ticks, owner_boot_id FROM runs "
              "WHERE status = 'running' AND job_id IS NULL AND owner_host = :host AND owner_pid IS NOT NULL "
              "ORDER BY id");
      q->bind(":host", host);
      while (q->step()) {
        ProcessOwner o;
        o.pid = q->get<int>("owner_pid");
        o.start_ticks = static_cast<std::uint64_t>(q->get<std::int64_t>("owner_start_ticks"));
        o.boot_id = q->get<std::string>("owner_boot_id");
        o.host = host;
        candidates.emplace_back(q->get<RunId>("id"), o);
      }
    }
    std::vector<RunId> out;
    for (const auto& [id, owner] : candidates) {
      if (owner.boot_id == boot_id && alive(owner)) continue;
      const std::string why = "cut off: its process (pid " + std::to_string(owner.pid) + " on " + host +
                              ") ended while the run was in progress";
      Query q(db_,
              "UPDATE runs SET status = 'cut_off', finished_at = :now, "
              "  message = CASE WHEN message = '' THEN :why ELSE message || '; ' || :why END, "
              "  trial_count = (SELECT count(*) FROM trials WHERE trials.run_id = runs.id) "
              "WHERE id = :id AND status = 'running'");
      q->bind(":now", db_.now()).bind(":why", why).bind(":id", id);
      q->run();
      if (q->changes() > 0) out.push_back(id);
    }
    detail::check(tx.commit());
    return out;
  });
}

Result<std::int64_t> ProcessStore::add_group(const ChildGroupRecord& g) {
  return guard(db_, "record process group " + std::to_string(g.pgid), [&] {
    Query q(db_,
            "INSERT INTO child_groups (pgid, start_ticks, boot_id, host, owner_pid, owner_start_ticks, what, run_id, "
            "  started_at) VALUES (:pgid, :ticks, :boot, :host, :owner, :owner_ticks, :what, :run, :now) RETURNING id");
    q->bind(":pgid", g.pgid)
        .bind(":ticks", static_cast<std::int64_t>(g.start_ticks))
        .bind(":boot", g.owner.boot_id)
        .bind(":host", g.owner.host)
        .bind(":owner", g.owner.pid)
        .bind(":owner_ticks", static_cast<std::int64_t>(g.owner.start_ticks))
        .bind(":what", g.what)
        .bind(":run", g.run_id)
        .bind(":now", g.started_at != 0 ? g.started_at : db_.now());
    return q->returning<std::int64_t>("id");
  });
}

Status ProcessStore::remove_group(std::int64_t id) {
  return guard(db_, "forget process group", [&] {
    Query q(db_, "DELETE FROM child_groups WHERE id = :id");
    q->bind(":id", id);
    q->run();
  });
}

Result<std::vector<ChildGroupRecord>> ProcessStore::groups_on(const std::string& host) {
  return guard(db_, "list process groups", [&] {
    Query q(db_,
            "SELECT id, pgid, start_ticks, boot_id, host, owner_pid, owner_start_ticks, what, run_id, started_at "
            "FROM child_groups WHERE host = :host ORDER BY id");
    q->bind(":host", host);
    std::vector<ChildGroupRecord> out;
    while (q->step()) {
      ChildGroupRecord g;
      g.id = q->get<std::int64_t>("id");
      g.pgid = q->get<int>("pgid");
      g.start_ticks = static_cast<std::uint64_t>(q->get<std::int64_t>("start_ticks"));
      g.owner.boot_id = q->get<std::string>("boot_id");
      g.owner.host = q->get<std::string>("host");
      g.owner.pid = q->get<int>("owner_pid");
      g.owner.start_ticks = static_cast<std::uint64_t>(q->get<std::int64_t>("owner_start_ticks"));
      g.what = q->get<std::string>("what");
      g.run_id = q->get<std::optional<RunId>>("run_id");
      g.started_at = q->get<UnixSeconds>("started_at");
      out.push_back(std::move(g));
    }
    return out;
  });
}

}  // namespace perfwatch::store
