#include "web/rate_limiter.h"

#include <algorithm>
#include <chrono>

namespace perfwatch::web {

RateLimiter::RateLimiter(RatePolicy policy, std::function<double()> clock)
    : policy_(policy), clock_(std::move(clock)) {
  if (!clock_) {
    clock_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
  }
}

bool RateLimiter::allow(const std::string& client, double* retry_after_s) {
  std::lock_guard lock(mutex_);
  double now = clock_();
  auto it = buckets_.find(client);
  if (it == buckets_.end()) {
    if (buckets_.size() >= policy_.max_clients) make_room(now);
    it = buckets_.emplace(client, Bucket{policy_.burst, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = std::min(policy_.burst, b.tokens + (now - b.at) * policy_.per_second);
  b.at = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  if (retry_after_s) *retry_after_s = policy_.per_second > 0 ? (1 - b.tokens) / policy_.per_second : 3600;
  return false;
}

void RateLimiter::make_room(double now) {
  // A bucket that has refilled is the same as no bucket: drop those first.
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    double tokens = it->second.tokens + (now - it->second.at) * policy_.per_second;
    it = tokens >= policy_.burst ? buckets_.erase(it) : std::next(it);
  }
  // Still full: forget the emptiest-in-time one (the least recently seen).
  if (buckets_.size() >= policy_.max_clients) {
    auto oldest = std::min_element(buckets_.begin(), buckets_.end(),
                                   [](const auto& a, const auto& b) { return a.second.at < b.second.at; });
    buckets_.erase(oldest);
  }
}

}  // namespace perfwatch::web
