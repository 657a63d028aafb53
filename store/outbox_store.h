// The webhook outbox: every webhook message is a row before it is sent, so
// that a message announced is delivered at least once, across crashes.
//
//   OutboxWriter(db).add(message)     in the transaction that stores what the
//                                     message announces (judging's flags)
//   OutboxWriter(db).due()            what a sender should POST now
//   OutboxWriter(db).delivered(id)    after a 2xx
//   OutboxWriter(db).attempt_failed() after anything else: retry at, or failed
//   OutboxReader(db).messages(filter) every message, delivered ones too
//
// Life of a message: pending -> delivered, or pending -> (attempt failed,
// pending again, due later)* -> failed, when the sender gives up. Nothing is
// deleted. Deciding when to retry is the sender's (daemon/webhook_outbox.h);
// the store keeps what it decided.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"
#include "store/ids.h"

namespace perfwatch::store {

using OutboxId = RowId;

enum class OutboxState { kPending, kDelivered, kFailed };
std::string_view to_string(OutboxState v);  // "pending", "delivered", "failed"
std::optional<OutboxState> parse_outbox_state(std::string_view s);

// A message to send.
struct OutboxMessage {
  std::string url;                  // REQUIRES: not empty
  std::string event;                // the body's "event" ("regression", ...); REQUIRES: not empty
  std::optional<FlagId> flag_id;    // the flag it is about, if any
  std::string commit_sha;           // the commit it is about, if any
  nlohmann::json body = nlohmann::json::object();  // what is POSTed (the sender adds message_id)
};

// A message as the outbox keeps it.
struct OutboxRecord {
  OutboxId id = 0;
  std::string message_id;  // stable and unique ("pw-" and 32 hex digits): receivers de-duplicate on it
  std::string url;
  std::string event;
  std::optional<FlagId> flag_id;
  std::string commit_sha;
  nlohmann::json body = nlohmann::json::object();
  OutboxState state = OutboxState::kPending;
  std::int64_t attempts = 0;  // POSTs tried, the delivering one included
  UnixSeconds created_at = 0;
  UnixSeconds next_attempt_at = 0;  // a pending message is due from then on
  std::optional<UnixSeconds> last_attempt_at;
  std::optional<UnixSeconds> delivered_at;
  std::string last_error;  // of the last failed attempt ("" when none failed); the sender leaves the URL out

  friend bool operator==(const OutboxRecord&, const OutboxRecord&) = default;
};

class OutboxWriter {
 public:
  explicit OutboxWriter(Database& db) : db_(db) {}

  // Writes a pending message, due at once, with a new random message_id;
  // returns it. Inside the caller's transaction when there is one (then it
  // is written, or not, with what the caller writes). kInvalidArgument for
  // an empty url or event.
  Result<OutboxRecord> add(const OutboxMessage& message);

  // The pending messages due now (next_attempt_at <= the store's clock),
  // the longest due first (among equals, the fewest attempts, then the
  // oldest), at most `limit`.
  Result<std::vector<OutboxRecord>> due(int limit = 100);

  // A POST of a pending message succeeded: delivered, attempts + 1,
  // delivered_at = last_attempt_at = now. kNotFound for an unknown id;
  // kInvalidArgument unless it is pending (a message is delivered once).
  Status delivered(OutboxId id);

  // A POST of a pending message failed with `error`: attempts + 1,
  // last_attempt_at = now, last_error = error; pending again and due at
  // `retry_at`, or -- with retry_at nullopt -- failed for good. kNotFound for
  // an unknown id; kInvalidArgument unless it is pending.
  Status attempt_failed(OutboxId id, std::string_view error, std::optional<UnixSeconds> retry_at);

 private:
  Database& db_;
};

struct OutboxFilter {
  std::optional<OutboxState> state;  // nullopt: every state
  std::optional<FlagId> flag_id;
  int limit = 100;  // newest first; REQUIRES: >= 0
  int offset = 0;   // REQUIRES: >= 0
};

class OutboxReader {
 public:
  explicit OutboxReader(Database& db) : db_(db) {}

  // kNotFound for an unknown id.
  Result<OutboxRecord> message(OutboxId id);
  // Newest first. kInvalidArgument for a negative limit or offset.
  Result<std::vector<OutboxRecord>> messages(const OutboxFilter& filter);
  // Messages by state (every state present, zero included).
  Result<std::map<OutboxState, std::int64_t>> counts();

 private:
  Database& db_;
};

}  // namespace perfwatch::store
