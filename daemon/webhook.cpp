#include "daemon/webhook.h"

#include <httplib.h>

#include "common/text.h"

namespace perfwatch::daemon {

Result<Webhook> Webhook::make(const std::string& url, double timeout_s) {
  const std::string where = "--webhook " + url;
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return fail(invalid_argument(where, "must start with http:// or https://"));
  std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return fail(invalid_argument(where, "scheme '" + scheme + "': must be http or https"));
  }
  std::size_t host_begin = scheme_end + 3;
  std::size_t path_begin = url.find('/', host_begin);
  std::string host = url.substr(host_begin, path_begin == std::string::npos ? std::string::npos : path_begin - host_begin);
  if (host.empty()) return fail(invalid_argument(where, "has no host"));
  std::string path = path_begin == std::string::npos ? "/" : url.substr(path_begin);
  return Webhook(url, scheme + "://" + host, path, timeout_s);
}

Status Webhook::post(const nlohmann::json& message, const std::string& message_id) const {
  httplib::Client client(origin_);
  if (!client.is_valid()) return fail(invalid_argument("webhook " + url_, "cannot make a client for " + origin_));
  const auto seconds = static_cast<time_t>(timeout_s_);
  const auto micros = static_cast<time_t>((timeout_s_ - static_cast<double>(seconds)) * 1e6);
  client.set_connection_timeout(seconds, micros);
  client.set_read_timeout(seconds, micros);
  client.set_write_timeout(seconds, micros);
  httplib::Headers headers;
  if (!message_id.empty()) headers.emplace("X-Perfwatch-Message-Id", message_id);
  auto response = client.Post(path_.c_str(), headers, json_text(message), "application/json");
  if (!response) {
    return fail(io_error("webhook " + url_, "POST failed: " + httplib::to_string(response.error())));
  }
  if (response->status < 200 || response->status >= 300) {
    return fail(Error{ErrorCode::kFailed, "webhook " + url_, "POST answered " + std::to_string(response->status)});
  }
  return {};
}

Status HttpWebhookPoster::post(const std::string& url, const nlohmann::json& body, const std::string& message_id) {
  auto hook = Webhook::make(url, timeout_s_);
  if (!hook) return fail(hook.error());
  return hook->post(body, message_id);
}

}  // namespace perfwatch::daemon
