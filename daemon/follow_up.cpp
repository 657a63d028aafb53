#include "daemon/follow_up.h"

#include "store/analysis_store.h"
#include "store/history_store.h"
#include "store/queue_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

Status queue_confirmations(Context& ctx, const std::string& branch,
                           const std::vector<judge::ConfirmRequest>& requests) {
  for (const auto& [sha, options] : judge::confirm_options(requests)) {
    store::JobRequest req;
    req.repo_id = ctx.repo;
    req.commit_sha = sha;
    req.branch = branch;
    req.kind = store::JobKind::kBench;
    req.priority = 1;
    req.options = options;
    req.testbed = ctx.testbed.name;  // confirmed where it was seen
    req.again = true;
    auto q = store::JobQueue(ctx.db).enqueue(req);
    if (!q) return fail(q.error());
    ctx.log.event("confirm").commit(sha).add("job", static_cast<long long>(q->id)).add(
        "queued", q->created ? "yes" : "already");
  }
  return {};
}

std::map<judge::Cell, nlohmann::json> cells_to_confirm(store::Database& db, const nlohmann::json& job_options) {
  std::map<judge::Cell, nlohmann::json> out;
  for (const auto& c : job_options.value("confirm", nlohmann::json::array())) {
    if (!c.is_object()) continue;
    auto point = store::RunReader(db).find_point(c.value("point", ""));
    if (point && *point) out[{c.value("variant", ""), (*point)->id}] = c.value("change_point", nlohmann::json::object());
  }
  return out;
}

Status queue_rejudge_of_descendants(Context& ctx, const std::string& branch, const store::CommitRecord& commit,
                                    store::TestbedId testbed) {
  auto next = store::HistoryReader(ctx.db).next_measured(commit.id, testbed);
  if (!next) return fail(next.error());
  for (const auto& n : *next) {
    auto compared = store::AnalysisReader(ctx.db).comparisons_of_commit(n.id);
    if (!compared) return fail(compared.error());
    bool against_it = false;
    for (const auto& c : *compared)
      against_it = against_it || (c.against_commit_id == commit.id && c.testbed_id == testbed);
    if (against_it) continue;
    store::JobRequest req;
    req.repo_id = ctx.repo;
    req.commit_sha = n.sha;
    req.branch = branch;
    req.kind = store::JobKind::kBench;
    req.priority = 1;
    req.options = {{"rejudge_after", commit.sha}};
    req.testbed = ctx.testbed.name;
    req.again = true;
    auto q = store::JobQueue(ctx.db).enqueue(req);
    if (!q) return fail(q.error());
    ctx.log.event("rejudge").commit(n.sha).add("after", commit.sha.substr(0, 10)).add(
        "job", static_cast<long long>(q->id)).add("queued", q->created ? "yes" : "already");
  }
  return {};
}

}  // namespace perfwatch::daemon
