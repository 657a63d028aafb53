#include "daemon/webhook_outbox.h"

#include <algorithm>
#include <set>
#include <string>

namespace perfwatch::daemon {

std::optional<store::UnixSeconds> retry_at(store::UnixSeconds now, std::int64_t attempts, const DeliveryPolicy& policy) {
  if (attempts >= policy.max_attempts) return std::nullopt;
  std::int64_t wait = std::max<std::int64_t>(policy.first_retry_s, 0);
  for (std::int64_t i = 1; i < attempts && wait > 0 && wait < policy.max_retry_s; ++i) wait *= 2;
  return now + std::min(wait, std::max<std::int64_t>(policy.max_retry_s, 0));
}

nlohmann::json body_to_post(const store::OutboxRecord& message) {
  nlohmann::json body = message.body.is_object() ? message.body : nlohmann::json{{"body", message.body}};
  body["message_id"] = message.message_id;
  return body;
}

Result<DeliveryRound> deliver_due(store::Database& db, EventLog& log, WebhookPoster& poster,
                                  const DeliveryPolicy& policy, const std::atomic<bool>* stop) {
  store::OutboxWriter outbox(db);
  auto due = outbox.due(1000);
  if (!due) return fail(due.error());
  DeliveryRound round;
  std::set<std::string> down;  // URLs whose POST failed in this round
  for (const auto& m : *due) {
    if ((stop && stop->load()) || down.contains(m.url)) {
      ++round.left;
      continue;
    }
    auto posted = poster.post(m.url, body_to_post(m), m.message_id);
    const std::int64_t attempt = m.attempts + 1;
    auto e = log.event("webhook");
    e.commit(m.commit_sha);
    if (m.flag_id) e.add("flag", static_cast<long long>(*m.flag_id));
    e.add("event", m.event).add("message_id", m.message_id).add("attempt", static_cast<long long>(attempt));
    if (posted) {
      if (auto s = outbox.delivered(m.id); !s) return fail(s.error());
      e.add("status", "ok");
      ++round.delivered;
      continue;
    }
    down.insert(m.url);
    const store::UnixSeconds now = db.now();
    const auto next = retry_at(now, attempt, policy);
    // The log (the daemon's own) names the URL; the stored error, which the
    // API shows, does not: a webhook URL's path is often its secret.
    if (auto s = outbox.attempt_failed(m.id, posted.error().message, next); !s) return fail(s.error());
    e.add("status", "failed").add("message", posted.error().to_string());
    if (next) {
      e.add("retry_in_s", static_cast<long long>(*next - now));
      ++round.retrying;
    } else {
      e.add("gave_up", "yes");
      ++round.failed;
    }
  }
  return round;
}

}  // namespace perfwatch::daemon
