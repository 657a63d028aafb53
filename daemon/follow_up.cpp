#include "daemon/follow_up.h"

#include "store/queue_store.h"

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
    req.again = true;
    auto q = store::JobQueue(ctx.db).enqueue(req);
    if (!q) return fail(q.error());
    ctx.log.event("confirm").commit(sha).add("job", static_cast<long long>(q->id)).add(
        "queued", q->created ? "yes" : "already");
  }
  return {};
}

}  // namespace perfwatch::daemon
