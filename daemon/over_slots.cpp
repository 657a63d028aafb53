#include "daemon/over_slots.h"

#include <algorithm>
#include <mutex>
#include <thread>

namespace perfwatch::daemon {

Status over_slots(store::Database& db, const std::vector<std::shared_ptr<const Slot>>& slots, int n,
                  const SlotTask& task) {
  if (slots.size() <= 1 || n <= 1) {
    for (int k = 0; k < n; ++k)
      if (auto s = task(k, db, *slots.front()); !s) return s;
    return {};
  }
  std::mutex mutex;
  int next = 0;
  Status first;
  auto work = [&](const Slot& slot) {
    auto own = store::Database::open(db.path());
    if (!own) {
      std::lock_guard lock(mutex);
      if (first) first = fail(own.error());
      return;
    }
    for (;;) {
      int k;
      {
        std::lock_guard lock(mutex);
        if (!first || next >= n) return;
        k = next++;
      }
      Status s = task(k, *own, slot);
      std::lock_guard lock(mutex);
      if (!s && first) first = s;
    }
  };
  {
    std::vector<std::jthread> workers;
    for (std::size_t i = 0; i < std::min<std::size_t>(slots.size(), n); ++i) workers.emplace_back(work, std::cref(*slots[i]));
  }
  return first;
}

}  // namespace perfwatch::daemon
