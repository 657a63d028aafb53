// Announcing what judging returned (judge/judge_commit.h): one event-log
// line per comparison, flag event, experiment and change point to confirm,
// and a webhook message for each new regression (step, change point or
// drift) and for each announced regression that judging later withdrew.
// Judging decides; this file only tells.
//
// Webhooks go through the outbox (store/outbox_store.h): queue_webhooks()
// writes the messages inside the transaction that stores judging's results
// (commit_job.cpp), so a flag stored is a message stored, whatever happens
// next; daemon/webhook_outbox.h delivers them.
#pragma once

#include <vector>

#include "common/result.h"
#include "daemon/context.h"
#include "judge/judge_commit.h"
#include "runner/manifest.h"
#include "store/outbox_store.h"
#include "store/records.h"

namespace perfwatch::daemon {

// The webhook messages of `result`, written to the outbox as pending (none
// without a configured webhook); returns them as written. Sends nothing.
// `commit`: the commit judged; `branch`: the job's.
Result<std::vector<store::OutboxRecord>> queue_webhooks(Context& ctx, const runner::Manifest& manifest,
                                                        const store::CommitRecord& commit, const std::string& branch,
                                                        const judge::JudgeResult& result);

// The event-log lines of `result`, and one line per message `queued`
// (step=webhook status=queued). Call after the transaction committed.
void announce(Context& ctx, const runner::Manifest& manifest, const store::CommitRecord& commit,
              const std::string& branch, const judge::JudgeResult& result,
              const std::vector<store::OutboxRecord>& queued = {});

// One delivery round of the outbox (daemon/webhook_outbox.h) through
// ctx.poster: what is due now, pending from this job or from before a crash.
// Errors are the store's.
Status deliver_webhooks(Context& ctx);

}  // namespace perfwatch::daemon
