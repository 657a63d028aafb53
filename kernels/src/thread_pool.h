// A fixed set of worker threads that run one parallel loop at a time. The
// CPU backend keeps one for its lifetime so a decode step costs two wake-ups,
// not thread creation.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mla {

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }

  // Runs task(i, worker) for every i in [0, count), each exactly once, spread
  // over the workers (worker in [0, size())); returns when all are done. If a
  // task throws, the remaining tasks are dropped and the first exception is
  // rethrown here. Not reentrant: one run at a time.
  void run(std::int64_t count, const std::function<void(std::int64_t, int)>& task);

  static int hardware_threads();

 private:
  void work(int worker);

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::int64_t, int)>* task_ = nullptr;
  std::int64_t count_ = 0;
  std::atomic<std::int64_t> next_{0};
  int busy_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace mla
