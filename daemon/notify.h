// Announcing what judging returned (judge/judge_commit.h): one event-log
// line per comparison, flag event, experiment and change point to confirm,
// and a webhook POST for each new regression (step, change point or drift)
// and for each announced regression that judging later withdrew. Judging
// decides; this file only tells.
#pragma once

#include "daemon/context.h"
#include "judge/judge_commit.h"
#include "runner/manifest.h"
#include "store/records.h"

namespace perfwatch::daemon {

// `commit`: the commit judged; `branch`: the job's.
void announce(Context& ctx, const runner::Manifest& manifest, const store::CommitRecord& commit,
              const std::string& branch, const judge::JudgeResult& result);

}  // namespace perfwatch::daemon
