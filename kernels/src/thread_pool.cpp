#include "thread_pool.h"

#include <utility>

namespace mla {

int ThreadPool::hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = hardware_threads();
  threads_.reserve(static_cast<std::size_t>(threads));
  for (int w = 0; w < threads; ++w) threads_.emplace_back([this, w] { work(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::run(std::int64_t count, const std::function<void(std::int64_t, int)>& task) {
  if (count <= 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  task_ = &task;
  count_ = count;
  next_.store(0, std::memory_order_relaxed);
  busy_ = size();
  error_ = nullptr;
  ++generation_;
  wake_.notify_all();
  done_.wait(lock, [this] { return busy_ == 0; });
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::work(int worker) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(std::int64_t, int)>* task;
    std::int64_t count;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      task = task_;
      count = count_;
    }
    for (;;) {
      const std::int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) break;
      try {
        (*task)(i, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = std::current_exception();
        next_.store(count, std::memory_order_relaxed);
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (--busy_ == 0) done_.notify_one();
  }
}

}  // namespace mla
