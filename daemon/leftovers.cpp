#include "daemon/leftovers.h"

#include <memory>

#include "runner/process_groups.h"

namespace perfwatch::daemon {

store::ProcessOwner this_process() {
  runner::ProcessIdentity me = runner::self();
  return {me.pid, me.start_ticks, runner::boot_id(), runner::host_name()};
}

Result<Leftovers> end_leftovers(store::Database& db, double grace_s) {
  const store::ProcessOwner me = this_process();
  store::ProcessStore processes(db);
  auto alive = [&](const store::ProcessOwner& o) {
    return o.boot_id == me.boot_id && runner::alive({o.pid, o.start_ticks});
  };
  Leftovers out;
  auto groups = processes.groups_on(me.host);
  if (!groups) return fail(groups.error());
  for (const auto& g : *groups) {
    if (alive(g.owner)) continue;  // a live perfwatch's child: its own business
    runner::Leftover what = runner::Leftover::kGone;
    if (g.owner.boot_id == me.boot_id) what = runner::end_leftover_group({g.pgid, g.start_ticks}, grace_s);
    if (auto s = processes.remove_group(g.id); !s) return fail(s.error());
    out.groups.push_back({g, what});
  }
  auto runs = processes.cut_off_orphaned_runs(me.host, me.boot_id, alive);
  if (!runs) return fail(runs.error());
  out.runs_cut_off = std::move(*runs);
  return out;
}

runner::ChildWatch recording_watch(store::Database& db, std::string what, std::optional<store::RunId> run,
                                   const std::atomic<bool>* stop) {
  runner::ChildWatch watch;
  watch.stop = stop;
  auto row = std::make_shared<std::int64_t>(0);
  watch.started = [&db, what, run, row](const runner::ProcessIdentity& leader) {
    store::ChildGroupRecord g;
    g.pgid = leader.pid;
    g.start_ticks = leader.start_ticks;
    g.owner = this_process();
    g.what = what;
    g.run_id = run;
    if (auto id = store::ProcessStore(db).add_group(g)) *row = *id;
  };
  watch.ended = [&db, row](const runner::ProcessIdentity&) {
    if (*row != 0) (void)store::ProcessStore(db).remove_group(*row);
  };
  return watch;
}

}  // namespace perfwatch::daemon
