// Items waiting to be served, taken by client in turn: each pop() takes the
// oldest item of the client whose turn it is, and that client goes to the
// back of the turn if it has more. So a client with a thousand requests
// waiting delays another client's one request by at most one of its own.
// Not thread-safe (the caller holds its lock).
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace perfwatch::web {

template <class T>
class FairQueue {
 public:
  void push(const std::string& client, T item) {
    auto& q = queues_[client];
    if (q.empty()) turn_.push_back(client);
    q.push_back(std::move(item));
    ++size_;
  }

  std::optional<T> pop() {
    if (turn_.empty()) return std::nullopt;
    std::string client = std::move(turn_.front());
    turn_.pop_front();
    auto it = queues_.find(client);
    T item = std::move(it->second.front());
    it->second.pop_front();
    --size_;
    if (it->second.empty()) queues_.erase(it);
    else turn_.push_back(std::move(client));
    return item;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void clear() {
    queues_.clear();
    turn_.clear();
    size_ = 0;
  }

 private:
  std::unordered_map<std::string, std::deque<T>> queues_;
  std::deque<std::string> turn_;
  std::size_t size_ = 0;
};

}  // namespace perfwatch::web
