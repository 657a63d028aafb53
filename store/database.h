// The SQLite database of perfwatch: one file, WAL mode, one writer (the daemon
// or the CLI) and any number of readers (the web server) that never block it.
//
// A Database is one connection. It is used by one thread at a time (give each
// thread its own, or use ReadPool); the store's writer and reader classes hold
// a Database& and must not outlive it, nor survive a move of it.
//
// Every error comes out as a perfwatch::Error whose `where` names the database
// file and the operation ("/var/pw/perf.db: insert trial"); nothing outside
// store/ sees a sqlite3 handle or an SQLite error code.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/ids.h"

struct sqlite3;

namespace perfwatch::store {

namespace detail {
class Statement;
struct Access;
}  // namespace detail

struct OpenOptions {
  // How long a statement waits for another connection's lock before it fails
  // with a kTimeout error.
  int busy_timeout_ms = 5000;
  // Page cache of the connection, KiB. The history reads touch a few MB of
  // index and summary pages; SQLite's default (2 MB) re-reads them per call.
  int cache_kib = 32 * 1024;
  // Bytes of the file read through a memory map instead of read() calls
  // (0 = off); WAL writes still go through write().
  std::int64_t mmap_bytes = 256LL << 20;
  // Tests only: migrate to this schema version instead of the latest. Ignored
  // by open_read_only.
  std::optional<int> schema_version;
  // The clock behind every stamp the store writes itself (created_at,
  // enqueued_at, ...). Default: the system clock.
  std::function<UnixSeconds()> clock;
};

class Database {
 public:
  // Opens (creating it if absent) the database for reading and writing and
  // brings its schema to the latest version this binary knows (see
  // migrations.h). Refuses, with kInvalidArgument and before anything is
  // written to the file, a database whose schema is newer than this binary
  // and a SQLite file that is not perfwatch's (another application_id, or
  // tables without a perfwatch schema version).
  static Result<Database> open(const std::filesystem::path& file, OpenOptions options = {});

  // Opens an existing database for reading only (PRAGMA query_only), as the
  // web server does. Works while a writer is active and never blocks it.
  // kNotFound if the file does not exist; kInvalidArgument if its schema is
  // not exactly the version this binary knows (a writer must migrate it).
  // On a read-only file system (its folder not writable, no -wal file left)
  // it is opened as immutable (URI mode=ro&immutable=1), as SQLite documents
  // for WAL databases on read-only media.
  static Result<Database> open_read_only(const std::filesystem::path& file, OpenOptions options = {});

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  // The schema version (PRAGMA user_version) after opening.
  int schema_version() const { return schema_version_; }
  // The store's clock.
  UnixSeconds now() const;

  // Closes the connection; never throws.
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };

 private:
  friend struct detail::Access;
  struct Cache;  // prepared statements kept for hot paths

  Database(std::unique_ptr<sqlite3, Closer> handle, std::string path, bool read_only,
           std::function<UnixSeconds()> clock);
  static Result<Database> open_read_only_as(const std::filesystem::path& file, const std::string& name, int flags,
                                            OpenOptions options);

  std::unique_ptr<sqlite3, Closer> handle_;
  // After handle_, so it is destroyed (its statements finalised) before the
  // connection closes.
  std::unique_ptr<Cache> cache_;
  std::string path_;
  bool read_only_ = false;
  int schema_version_ = 0;
  std::function<UnixSeconds()> clock_;
};

// A transaction: begins in its constructor, rolls back in its destructor
// unless commit() succeeded. Inside another transaction of the same
// connection it becomes a savepoint, so the store's own multi-statement
// writes nest inside a caller's transaction.
//
//   Transaction tx(db);                // BEGIN IMMEDIATE: takes the write lock now
//   if (!tx.status()) return fail(tx.status().error());
//   ... writes ...
//   if (auto s = tx.commit(); !s) return s;
class Transaction {
 public:
  enum class Mode {
    kImmediate,  // writers: take the write lock at the start, so a writer never
                 // fails half way on a lock another writer holds
    kDeferred,   // readers: one consistent snapshot over several queries
  };

  explicit Transaction(Database& db, Mode mode = Mode::kImmediate);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // OK if the transaction began; otherwise why not (commit() then returns it too).
  const Status& status() const { return status_; }
  // Commits (or releases the savepoint). After a failed commit the destructor
  // still rolls back.
  Status commit();
  // Rolls back now; the destructor then does nothing.
  void rollback() noexcept;

 private:
  Database* db_;
  std::string savepoint_;  // empty for a top-level transaction
  Status status_;
  bool open_ = false;
};

}  // namespace perfwatch::store
