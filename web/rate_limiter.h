// Bounds the rate of expensive requests per client: a token bucket per
// remote address (burst tokens, refilled at per_second). Thread-safe; holds
// at most max_clients buckets (full ones are dropped first).
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace perfwatch::web {

struct RatePolicy {
  double per_second = 20;  // sustained expensive requests per second per client
  double burst = 40;       // how many may come at once
  std::size_t max_clients = 4096;
};

class RateLimiter {
 public:
  // `clock`: seconds on a monotonic clock (default std::chrono::steady_clock).
  explicit RateLimiter(RatePolicy policy, std::function<double()> clock = {});

  // Takes a token for `client`: true if it had one. Otherwise false, and
  // *retry_after_s says when the next token comes.
  bool allow(const std::string& client, double* retry_after_s);

 private:
  struct Bucket {
    double tokens = 0;
    double at = 0;  // when `tokens` was last brought up to date
  };
  void make_room(double now);

  RatePolicy policy_;
  std::function<double()> clock_;
  std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace perfwatch::web
