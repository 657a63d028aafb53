// The optional webhook: a JSON message POSTed to a configured URL for each
// new regression flag (and each announced one withdrawn). Messages go
// through the outbox (store/outbox_store.h, daemon/webhook_outbox.h): a failed
// delivery is retried and never stops the daemon; the flag is in the store
// either way.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace perfwatch::daemon {

class Webhook {
 public:
  // url: "http://host[:port]/path" or "https://...". kInvalidArgument for
  // anything else.
  static Result<Webhook> make(const std::string& url, double timeout_s = 5);

  // POSTs the message (Content-Type: application/json; with a message id,
  // also the header X-Perfwatch-Message-Id: <id>, so a receiver can
  // de-duplicate before it parses the body). An error names the URL and says
  // what happened: no connection, a timeout, or the status code when it is
  // not 2xx.
  Status post(const nlohmann::json& message, const std::string& message_id = "") const;

  const std::string& url() const { return url_; }

 private:
  Webhook(std::string url, std::string origin, std::string path, double timeout_s)
      : url_(std::move(url)), origin_(std::move(origin)), path_(std::move(path)), timeout_s_(timeout_s) {}
  std::string url_;     // as given
  std::string origin_;  // "http://host:port"
  std::string path_;    // "/hooks/perf", at least "/"
  double timeout_s_;
};

// Where the outbox's sender POSTs: the outside world, so that a test can put
// a receiver that fails (or a fake) in its place.
class WebhookPoster {
 public:
  virtual ~WebhookPoster() = default;
  // POSTs `body` to `url` with its message id; OK only for a 2xx answer.
  virtual Status post(const std::string& url, const nlohmann::json& body, const std::string& message_id) = 0;
};

// The real one: HTTP(S) through Webhook, `timeout_s` for connecting, sending
// and reading each.
class HttpWebhookPoster : public WebhookPoster {
 public:
  explicit HttpWebhookPoster(double timeout_s = 5) : timeout_s_(timeout_s) {}
  Status post(const std::string& url, const nlohmann::json& body, const std::string& message_id) override;

 private:
  double timeout_s_;
};

}  // namespace perfwatch::daemon
