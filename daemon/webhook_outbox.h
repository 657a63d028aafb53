// Delivering the webhook outbox (store/outbox_store.h): at least once.
//
// A round POSTs every pending message that is due, oldest first, with its
// message id (the body's "message_id" and the X-Perfwatch-Message-Id
// header). A 2xx marks it delivered. Anything else is a failed attempt,
// tried again after a wait that doubles from `first_retry_s` up to
// `max_retry_s`; the attempt that makes `max_attempts` marks it failed, with
// its error, for a person to see (`perfwatch query webhooks --state failed`).
// Once a POST to a URL fails, the round leaves that URL's other messages for
// the next one without counting an attempt: a receiver that is down costs
// one timeout a round, not one per message.
//
// At least once, not exactly once: a daemon killed between a POST and
// marking it delivered sends it again at its next start, with the same
// message id, on which receivers de-duplicate.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "common/result.h"
#include "daemon/event_log.h"
#include "daemon/webhook.h"
#include "store/database.h"
#include "store/ids.h"
#include "store/outbox_store.h"

namespace perfwatch::daemon {

struct DeliveryPolicy {
  int max_attempts = 8;               // 30 s, 1, 2, 4, 8, 16, 32 min: about an hour in all
  std::int64_t first_retry_s = 30;
  std::int64_t max_retry_s = 3600;
};

// When to try again after a message's `attempts`-th failed attempt at `now`:
// now + first_retry_s x 2^(attempts - 1), at most max_retry_s; nullopt when
// attempts >= max_attempts (give up). first_retry_s = 0: due again at once
// (the next round). Decides only.
std::optional<store::UnixSeconds> retry_at(store::UnixSeconds now, std::int64_t attempts, const DeliveryPolicy& policy);

// What the body of a message is when it is POSTed: the stored body with its
// message id.
nlohmann::json body_to_post(const store::OutboxRecord& message);

struct DeliveryRound {
  int delivered = 0;
  int retrying = 0;  // attempts that failed and will be tried again
  int failed = 0;    // messages given up on in this round
  int left = 0;      // due but left for the next round (their URL failed in this one, or a stop)
};

// One round, as above. Logs one line per attempt:
//   commit=... step=webhook flag=12 event=regression message_id=pw-... attempt=1 status=ok
//   ... status=failed message="webhook URL: POST answered 500" retry_in_s=30
//   ... status=failed message=... gave_up=yes
// Stops between POSTs when `stop` is set. Errors are the store's only.
Result<DeliveryRound> deliver_due(store::Database& db, EventLog& log, WebhookPoster& poster,
                                  const DeliveryPolicy& policy, const std::atomic<bool>* stop = nullptr);

}  // namespace perfwatch::daemon
