#include "store/outbox_store.h"

#include <array>
#include <functional>
#include <random>

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

constexpr std::array<std::pair<OutboxState, std::string_view>, 3> kStates{
    {{OutboxState::kPending, "pending"}, {OutboxState::kDelivered, "delivered"}, {OutboxState::kFailed, "failed"}}};

constexpr const char* kColumns =
    "id, message_id, url, event, flag_id, commit_sha, body_json, state, attempts, created_at, next_attempt_at, "
    "last_attempt_at, delivered_at, last_error";

OutboxRecord read_message(const detail::Statement& s) {
  OutboxRecord m;
  m.id = s.get<OutboxId>("id");
  m.message_id = s.get<std::string>("message_id");
  m.url = s.get<std::string>("url");
  m.event = s.get<std::string>("event");
  m.flag_id = s.get<std::optional<FlagId>>("flag_id");
  m.commit_sha = s.get<std::string>("commit_sha");
  m.body = s.get<nlohmann::json>("body_json");
  m.state = detail::read_enum(s, "state", parse_outbox_state);
  m.attempts = s.get<std::int64_t>("attempts");
  m.created_at = s.get<UnixSeconds>("created_at");
  m.next_attempt_at = s.get<UnixSeconds>("next_attempt_at");
  m.last_attempt_at = s.get<std::optional<UnixSeconds>>("last_attempt_at");
  m.delivered_at = s.get<std::optional<UnixSeconds>>("delivered_at");
  m.last_error = s.get<std::string>("last_error");
  return m;
}

OutboxRecord read_by_id(Database& db, OutboxId id) {
  Query q(db, std::string("SELECT ") + kColumns + " FROM outbox WHERE id = :id");
  q->bind(":id", id);
  if (!q->step()) raise(ErrorCode::kNotFound, "webhook message " + std::to_string(id) + ": no such message");
  return read_message(*q);
}

// "pw-" and 128 random bits in hex: unique without coordination, so two
// databases posting to one receiver never share an id.
std::string new_message_id() {
  static thread_local std::mt19937_64 random{[] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "pw-";
  for (int half = 0; half < 2; ++half) {
    std::uint64_t bits = random();
    for (int i = 0; i < 16; ++i, bits >>= 4) id += kHex[bits & 0xf];
  }
  return id;
}

// The write every attempt ends with; raises unless the message was pending.
void end_attempt(Database& db, OutboxId id, std::string_view sql_set, const std::function<void(detail::Statement&)>& bind) {
  Query q(db, "UPDATE outbox SET " + std::string(sql_set) +
                  ", attempts = attempts + 1, last_attempt_at = :now WHERE id = :id AND state = 'pending'");
  bind(*q);
  q->bind(":now", db.now()).bind(":id", id);
  q->run();
  if (q->changes() == 0) {
    auto known = read_by_id(db, id);  // kNotFound if absent
    raise(ErrorCode::kInvalidArgument, "webhook message " + std::to_string(id) + ": is " +
                                           std::string(to_string(known.state)) + ", not pending");
  }
}

}  // namespace

std::string_view to_string(OutboxState v) {
  for (const auto& [s, word] : kStates)
    if (s == v) return word;
  return "pending";
}

std::optional<OutboxState> parse_outbox_state(std::string_view word) {
  for (const auto& [s, w] : kStates)
    if (w == word) return s;
  return std::nullopt;
}

Result<OutboxRecord> OutboxWriter::add(const OutboxMessage& m) {
  return guard(db_, "add webhook message", [&] {
    if (m.url.empty()) raise(ErrorCode::kInvalidArgument, "webhook message: url is empty");
    if (m.event.empty()) raise(ErrorCode::kInvalidArgument, "webhook message: event is empty");
    const UnixSeconds now = db_.now();
    Query q(db_,
            "INSERT INTO outbox (message_id, url, event, flag_id, commit_sha, body_json, created_at, next_attempt_at) "
            "VALUES (:message_id, :url, :event, :flag, :sha, :body, :now, :now) RETURNING id");
    q->bind(":message_id", new_message_id())
        .bind(":url", m.url)
        .bind(":event", m.event)
        .bind(":flag", m.flag_id)
        .bind(":sha", m.commit_sha)
        .bind(":body", m.body)
        .bind(":now", now);
    const OutboxId id = q->returning<OutboxId>("id");
    return read_by_id(db_, id);
  });
}

Result<std::vector<OutboxRecord>> OutboxWriter::due(int limit) {
  return guard(db_, "read webhook messages due", [&] {
    if (limit < 0) raise(ErrorCode::kInvalidArgument, "limit must be >= 0");
    Query q(db_, std::string("SELECT ") + kColumns +
                     " FROM outbox WHERE state = 'pending' AND next_attempt_at <= :now "
                     "ORDER BY next_attempt_at, attempts, id LIMIT :limit");
    q->bind(":now", db_.now()).bind(":limit", limit);
    std::vector<OutboxRecord> out;
    while (q->step()) out.push_back(read_message(*q));
    return out;
  });
}

Status OutboxWriter::delivered(OutboxId id) {
  return guard(db_, "mark webhook message " + std::to_string(id) + " delivered", [&] {
    end_attempt(db_, id, "state = 'delivered', delivered_at = :now", [](detail::Statement&) {});
  });
}

Status OutboxWriter::attempt_failed(OutboxId id, std::string_view error, std::optional<UnixSeconds> retry_at) {
  return guard(db_, "record a failed attempt of webhook message " + std::to_string(id), [&] {
    if (retry_at) {
      end_attempt(db_, id, "last_error = :error, next_attempt_at = :retry", [&](detail::Statement& s) {
        s.bind(":error", error).bind(":retry", *retry_at);
      });
    } else {
      end_attempt(db_, id, "last_error = :error, state = 'failed'",
                  [&](detail::Statement& s) { s.bind(":error", error); });
    }
  });
}

Result<OutboxRecord> OutboxReader::message(OutboxId id) {
  return guard(db_, "read webhook message", [&] { return read_by_id(db_, id); });
}

Result<std::vector<OutboxRecord>> OutboxReader::messages(const OutboxFilter& f) {
  return guard(db_, "list webhook messages", [&] {
    if (f.limit < 0 || f.offset < 0) raise(ErrorCode::kInvalidArgument, "limit and offset must be >= 0");
    Query q(db_, std::string("SELECT ") + kColumns +
                     " FROM outbox WHERE (:state IS NULL OR state = :state) AND (:flag IS NULL OR flag_id = :flag) "
                     "ORDER BY id DESC LIMIT :limit OFFSET :offset");
    std::optional<std::string> state;
    if (f.state) state = std::string(to_string(*f.state));
    q->bind(":state", state).bind(":flag", f.flag_id).bind(":limit", f.limit).bind(":offset", f.offset);
    std::vector<OutboxRecord> out;
    while (q->step()) out.push_back(read_message(*q));
    return out;
  });
}

Result<std::map<OutboxState, std::int64_t>> OutboxReader::counts() {
  return guard(db_, "count webhook messages", [&] {
    std::map<OutboxState, std::int64_t> out;
    for (const auto& [s, word] : kStates) out[s] = 0;
    Query q(db_, "SELECT state, count(*) AS n FROM outbox GROUP BY state");
    while (q->step()) out[detail::read_enum(*q, "state", parse_outbox_state)] = q->get<std::int64_t>("n");
    return out;
  });
}

}  // namespace perfwatch::store
