// Request latency per route, as a Prometheus histogram for /metrics:
// perfwatch_http_request_duration_seconds{route="/api/v1/history",le="0.05"}.
//
// The route label is the route's pattern ("/api/v1/commits/{sha}"), never
// the request's path, so the number of series is the number of routes
// (about 20) times the buckets, whatever clients ask for. A request that
// matches no route is not timed. The time is from routing to the reply
// being built: the handler and its database reads, not the network.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace perfwatch::web {

class RouteLatency {
 public:
  // Upper bounds of the buckets, seconds (then +Inf).
  static constexpr std::array<double, 12> kBucketsS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                        0.1,   0.25,   0.5,   1,    2.5,   10};

  // Registers a route before serving starts; returns its handle. Not
  // thread-safe: call it while setting up, never while requests are served.
  std::size_t add(std::string route);
  // Counts a request of `route` that took `seconds`. Thread-safe, lock-free.
  void observe(std::size_t route, double seconds);
  // The family's HELP, TYPE and samples in the text exposition format.
  void write(std::string& out) const;

 private:
  struct Series {
    explicit Series(std::string r) : route(std::move(r)) {}
    std::string route;
    std::array<std::atomic<std::uint64_t>, kBucketsS.size() + 1> buckets{};  // not cumulative; the last is +Inf
    std::atomic<std::uint64_t> sum_ns{0};
  };
  std::deque<Series> series_;  // a deque: handles stay valid as routes are added
};

// A label value escaped as the text format requires (backslash, double
// quote and line feed).
std::string prometheus_label(std::string_view value);

}  // namespace perfwatch::web
