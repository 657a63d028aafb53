#include "views/webhooks_view.h"

#include <algorithm>

#include "views/fragments.h"
#include "views/text_format.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

// "https://hooks.example.com" of "https://user:pw@hooks.example.com/services/T0/B0/secret":
// where a message goes, without the path and credentials that webhook URLs
// often carry as their secret.
std::string destination_of(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "";
  const auto host_begin = scheme_end + 3;
  auto host_end = url.find_first_of("/?#", host_begin);
  std::string host = url.substr(host_begin, host_end == std::string::npos ? std::string::npos : host_end - host_begin);
  if (auto at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);
  return url.substr(0, scheme_end) + "://" + host;
}

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json message_json(const store::OutboxRecord& m) {
  const bool pending = m.state == store::OutboxState::kPending;
  return {{"id", m.id},
          {"message_id", m.message_id},
          {"destination", destination_of(m.url)},
          {"event", m.event},
          {"flag_id", or_null(m.flag_id)},
          {"commit_sha", m.commit_sha},
          {"state", std::string(store::to_string(m.state))},
          {"attempts", m.attempts},
          {"created_at", m.created_at},
          {"next_attempt_at", pending ? json(m.next_attempt_at) : json(nullptr)},
          {"last_attempt_at", or_null(m.last_attempt_at)},
          {"delivered_at", or_null(m.delivered_at)},
          {"last_error", m.last_error},
          {"body", m.body}};
}

}  // namespace

Result<WebhooksView> webhooks_view(store::Database& db, const WebhooksRequest& request) {
  if (request.limit < 1 || request.limit > kWebhooksLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kWebhooksLimitMax)));
  if (request.offset < 0) return fail(invalid_argument("offset", "must not be negative"));
  store::OutboxFilter f;
  f.state = request.state;
  f.flag_id = request.flag;
  f.limit = request.limit + 1;  // one more says whether there is a next page
  f.offset = request.offset;
  store::OutboxReader reader(db);
  auto list = reader.messages(f);
  if (!list) return fail(list.error());
  auto counts = reader.counts();
  if (!counts) return fail(counts.error());
  WebhooksView view;
  view.state = request.state;
  view.limit = request.limit;
  view.offset = request.offset;
  view.has_more = static_cast<int>(list->size()) > request.limit;
  if (view.has_more) list->pop_back();
  view.messages = std::move(*list);
  view.counts = std::move(*counts);
  return view;
}

json webhooks_document(const WebhooksView& v) {
  json counts = json::object();
  for (const auto& [state, n] : v.counts) counts[std::string(store::to_string(state))] = n;
  json messages = json::array();
  for (const auto& m : v.messages) messages.push_back(message_json(m));
  return {{"schema_version", kSchemaVersion},
          {"state", v.state ? std::string(store::to_string(*v.state)) : std::string("any")},
          {"limit", v.limit},
          {"offset", v.offset},
          {"has_more", v.has_more},
          {"counts", std::move(counts)},
          {"messages", std::move(messages)}};
}

std::string webhooks_text(const WebhooksView& v) {
  using namespace text;
  auto count = [&](store::OutboxState s) {
    auto it = v.counts.find(s);
    return std::to_string(it == v.counts.end() ? 0 : it->second);
  };
  std::string out = "webhook messages: " + count(store::OutboxState::kPending) + " pending, " +
                    count(store::OutboxState::kDelivered) + " delivered, " + count(store::OutboxState::kFailed) +
                    " failed\n";
  if (v.messages.empty()) return out + "none" + (v.state ? " " + std::string(store::to_string(*v.state)) : "") + "\n";
  std::size_t ew = 7;
  for (const auto& m : v.messages) ew = std::max(ew, m.event.size() + 2);
  out += "\n" + pad("id", 7) + pad("state", 11) + lpad("tries", 5) + "  " + pad("event", ew) + pad("commit", 12) +
         pad("flag", 7) + "when\n";
  for (const auto& m : v.messages) {
    std::string when;
    switch (m.state) {
      case store::OutboxState::kDelivered: when = "delivered " + date(m.delivered_at.value_or(0)); break;
      case store::OutboxState::kFailed:
        when = "failed " + date(m.last_attempt_at.value_or(m.created_at)) + ", not tried again";
        break;
      case store::OutboxState::kPending: when = "next attempt " + date(m.next_attempt_at); break;
    }
    out += pad(std::to_string(m.id), 7) + pad(std::string(store::to_string(m.state)), 11) +
           lpad(std::to_string(m.attempts), 5) + "  " + pad(m.event, ew) + pad(m.commit_sha.substr(0, 10), 12) +
           pad(m.flag_id ? std::to_string(*m.flag_id) : "-", 7) + when + "\n";
    out += "       " + m.message_id + " to " + destination_of(m.url) + "\n";
    if (!m.last_error.empty()) out += "       last error: " + m.last_error + "\n";
  }
  return out;
}

}  // namespace perfwatch::views
