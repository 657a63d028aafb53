// Read-only connections for a multi-threaded reader (the web server): a
// Database is one thread's at a time, so each request leases one.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace perfwatch::store {

class ReadPool {
 public:
  // Checks that the database opens read-only now (and keeps that connection).
  // Keeps at most `max_idle` idle connections; more are opened on demand.
  static Result<std::unique_ptr<ReadPool>> open(const std::filesystem::path& file, int max_idle = 8,
                                                OpenOptions options = {});

  // A connection for the holder alone, back to the pool when the lease dies.
  class Lease {
   public:
    Lease(Lease&&) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Database& db() { return *db_; }

   private:
    friend class ReadPool;
    Lease(ReadPool* pool, std::unique_ptr<Database> db) : pool_(pool), db_(std::move(db)) {}
    ReadPool* pool_;
    std::unique_ptr<Database> db_;
  };

  // Thread-safe. The pool must outlive its leases.
  Result<Lease> lease();

 private:
  ReadPool(std::filesystem::path file, int max_idle, OpenOptions options)
      : file_(std::move(file)), max_idle_(max_idle), options_(std::move(options)) {}
  void give_back(std::unique_ptr<Database> db);

  std::filesystem::path file_;
  int max_idle_;
  OpenOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Database>> idle_;
};

}  // namespace perfwatch::store
