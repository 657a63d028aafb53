// A local webhook receiver on a free loopback port, stopped in its
// destructor: it keeps every body POSTed to /hook with its
// X-Perfwatch-Message-Id header, and answers the status it is set to (200
// unless told otherwise), so a test can make it fail and recover. While
// held, it keeps each request it gets unanswered (status 0 in received())
// until released: a POST in flight, for a test that kills its sender.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfwatch::daemon::testing {

class HookReceiver {
 public:
  struct Received {
    nlohmann::json body;
    std::string message_id;  // the header
    int answered = 0;        // the status it got
  };

  explicit HookReceiver(int status = 200) : status_(status) {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(mutex_);
      const bool held = held_;
      const int status = held ? 0 : status_.load();
      received_.push_back({nlohmann::json::parse(req.body, nullptr, false), req.get_header_value("X-Perfwatch-Message-Id"),
                           status});
      if (held) {
        released_.wait_for(lock, std::chrono::seconds(30), [this] { return !held_; });
        res.status = 503;
        return;
      }
      res.status = status;
      res.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Bound and listening already: a POST before the thread accepts waits in the backlog.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~HookReceiver() {
    hold(false);
    server_.stop();
    thread_.join();
  }
  HookReceiver(const HookReceiver&) = delete;
  HookReceiver& operator=(const HookReceiver&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  void answer(int status) { status_ = status; }
  void hold(bool on) {
    {
      std::lock_guard lock(mutex_);
      held_ = on;
    }
    released_.notify_all();
  }

  // Every body received, in order (failed attempts too).
  std::vector<nlohmann::json> bodies() {
    std::lock_guard lock(mutex_);
    std::vector<nlohmann::json> out;
    for (const auto& r : received_) out.push_back(r.body);
    return out;
  }
  std::vector<Received> received() {
    std::lock_guard lock(mutex_);
    return received_;
  }
  // The bodies it answered with a 2xx: the deliveries.
  std::vector<nlohmann::json> delivered() {
    std::lock_guard lock(mutex_);
    std::vector<nlohmann::json> out;
    for (const auto& r : received_)
      if (r.answered >= 200 && r.answered < 300) out.push_back(r.body);
    return out;
  }

 private:
  httplib::Server server_;
  std::atomic<int> status_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable released_;
  bool held_ = false;
  std::vector<Received> received_;
};

}  // namespace perfwatch::daemon::testing
