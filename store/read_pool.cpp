#include "store/read_pool.h"

namespace perfwatch::store {

Result<std::unique_ptr<ReadPool>> ReadPool::open(const std::filesystem::path& file, int max_idle,
                                                 OpenOptions options) {
  auto first = Database::open_read_only(file, options);
  if (!first) return fail(first.error());
  std::unique_ptr<ReadPool> pool(new ReadPool(file, max_idle < 1 ? 1 : max_idle, std::move(options)));
  pool->idle_.push_back(std::make_unique<Database>(std::move(*first)));
  return pool;
}

Result<ReadPool::Lease> ReadPool::lease() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto db = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(db));
    }
  }
  // Opening happens outside the lock: it reads the file.
  auto db = Database::open_read_only(file_, options_);
  if (!db) return fail(db.error());
  return Lease(this, std::make_unique<Database>(std::move(*db)));
}

void ReadPool::give_back(std::unique_ptr<Database> db) {
  std::lock_guard lock(mutex_);
  if (static_cast<int>(idle_.size()) < max_idle_) idle_.push_back(std::move(db));
}

ReadPool::Lease::Lease(Lease&& other) noexcept : pool_(other.pool_), db_(std::move(other.db_)) {
  other.pool_ = nullptr;
}

ReadPool::Lease::~Lease() {
  if (pool_ && db_) pool_->give_back(std::move(db_));
}

}  // namespace perfwatch::store
