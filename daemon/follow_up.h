// What judging a commit leaves to other jobs: change points it could not
// explain become confirm jobs (one job per commit, before routine work: the
// step is known to be there, naming the cells to confirm, as
// judge/confirmations.h says); and a commit measured after a descendant of
// it (it was given up on, then re-queued) has that descendant judged again,
// against it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "daemon/context.h"
#include "judge/confirmations.h"
#include "store/records.h"

namespace perfwatch::daemon {

Status queue_confirmations(Context& ctx, const std::string& branch,
                           const std::vector<judge::ConfirmRequest>& requests);

// The cells a confirm job's options name (variant and point key -> the
// change point that asked); a point the store does not know is left out.
std::map<judge::Cell, nlohmann::json> cells_to_confirm(store::Database& db, const nlohmann::json& job_options);

// The nearest measured descendants of `commit` on `testbed` that were judged
// without it -- none of their comparisons with the previous commit is against
// it, because it had no runs when they were judged -- are queued again (a
// bench job, before routine work: their runs are kept, so the job compares
// them with `commit`, grows both within the budget and judges). Without this,
// a step at the commit after one given up on and re-queued was never judged.
Status queue_rejudge_of_descendants(Context& ctx, const std::string& branch, const store::CommitRecord& commit,
                                    store::TestbedId testbed);

}  // namespace perfwatch::daemon
