#include "web/route_latency.h"

#include <cstdio>

namespace perfwatch::web {

std::string prometheus_label(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::size_t RouteLatency::add(std::string route) {
  series_.emplace_back(std::move(route));
  return series_.size() - 1;
}

void RouteLatency::observe(std::size_t route, double seconds) {
  if (route >= series_.size() || !(seconds >= 0)) return;
  Series& s = series_[route];
  std::size_t b = 0;
  while (b < kBucketsS.size() && seconds > kBucketsS[b]) ++b;
  s.buckets[b].fetch_add(1, std::memory_order_relaxed);
  s.sum_ns.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
}

void RouteLatency::write(std::string& out) const {
  const std::string name = "perfwatch_http_request_duration_seconds";
  out += "# HELP " + name + " Time from routing a request to its reply being built, by route pattern.\n";
  out += "# TYPE " + name + " histogram\n";
  char number[64];
  for (const Series& s : series_) {
    const std::string route = "route=\"" + prometheus_label(s.route) + "\"";
    // Read the buckets first: a request counted meanwhile then shows in
    // count but not yet in a bucket, never the other way round.
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b <= kBucketsS.size(); ++b) {
      cumulative += s.buckets[b].load(std::memory_order_relaxed);
      if (b < kBucketsS.size()) std::snprintf(number, sizeof number, "%g", kBucketsS[b]);
      out += name + "_bucket{" + route + ",le=\"" + (b < kBucketsS.size() ? number : "+Inf") + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    std::snprintf(number, sizeof number, "%.9f", static_cast<double>(s.sum_ns.load(std::memory_order_relaxed)) / 1e9);
    out += name + "_sum{" + route + "} " + number + "\n";
    // The +Inf bucket is the count by definition: written from the same reads.
    out += name + "_count{" + route + "} " + std::to_string(cumulative) + "\n";
  }
}

}  // namespace perfwatch::web
