// The optional webhook: a JSON message POSTed to a configured URL for each
// new regression flag. A failed delivery is logged by the caller and never
// stops the daemon: the flag is in the store either way.
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

  // POSTs the message (Content-Type: application/json). An error names the
  // URL and says what happened: no connection, a timeout, or the status code
  // when it is not 2xx.
  Status post(const nlohmann::json& message) const;

  const std::string& url() const { return url_; }

 private:
  Webhook(std::string url, std::string origin, std::string path, double timeout_s)
      : url_(std::move(url)), origin_(std::move(origin)), path_(std::move(path)), timeout_s_(timeout_s) {}
  std::string url_;     // as given
  std::string origin_;  // "http://host:port"
  std::string path_;    // "/hooks/perf", at least "/"
  double timeout_s_;
};

}  // namespace perfwatch::daemon
