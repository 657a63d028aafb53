// Change points that judging could not explain become confirm jobs: one job
// per commit, before routine work (the step is known to be there), naming
// the cells to confirm (judge/confirmations.h says which).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "daemon/context.h"
#include "judge/confirmations.h"

namespace perfwatch::daemon {

Status queue_confirmations(Context& ctx, const std::string& branch,
                           const std::vector<judge::ConfirmRequest>& requests);

}  // namespace perfwatch::daemon
