// The webhook outbox (store/outbox_store.h) as people see it: every message,
// newest first, with its state (pending, delivered, failed), attempts, when
// it was delivered or is tried next, and its last error -- the API's GET
// /api/v1/webhooks and `perfwatch query webhooks [--json]`
// (schemas/api/webhooks.schema.json). One model, printed as JSON or text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/outbox_store.h"

namespace perfwatch::views {

struct WebhooksRequest {
  std::optional<store::OutboxState> state;  // nullopt: every state
  std::optional<store::FlagId> flag;        // only the messages about this flag
  int limit = 50;                           // newest first, 1..kWebhooksLimitMax
  int offset = 0;
};
inline constexpr int kWebhooksLimitMax = 500;

struct WebhooksView {
  std::optional<store::OutboxState> state;
  int limit = 0;
  int offset = 0;
  bool has_more = false;
  std::map<store::OutboxState, std::int64_t> counts;  // the whole outbox, by state
  std::vector<store::OutboxRecord> messages;
};

// kInvalidArgument "limit"/"offset" out of range.
Result<WebhooksView> webhooks_view(store::Database& db, const WebhooksRequest& request);
nlohmann::json webhooks_document(const WebhooksView& view);
// One line per message: id, state, attempts, event, commit, flag, when
// (delivered, or next attempt), then its last error on a line of its own.
std::string webhooks_text(const WebhooksView& view);

}  // namespace perfwatch::views
