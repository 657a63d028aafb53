#include "store/database.h"

#include <sqlite3.h>

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <system_error>

#include "store/detail/statement.h"
#include "store/migrations.h"

namespace perfwatch::store {

using detail::Access;
using detail::Failure;

struct Database::Cache {
  std::unordered_map<std::string, std::unique_ptr<detail::Statement>> statements;
  std::int64_t savepoints = 0;
};

void Database::Closer::operator()(sqlite3* db) const noexcept {
  // close_v2 never fails for a valid handle: with statements still open it
  // defers the close until they are finalised.
  sqlite3_close_v2(db);
}

Database::Database(std::unique_ptr<sqlite3, Closer> handle, std::string path, bool read_only,
                   std::function<UnixSeconds()> clock)
    : handle_(std::move(handle)),
      cache_(std::make_unique<Cache>()),
      path_(std::move(path)),
      read_only_(read_only),
      clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return static_cast<UnixSeconds>(std::time(nullptr)); };
}

Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() {
  // Statements before the connection, whatever the member order says.
  cache_.reset();
}

UnixSeconds Database::now() const { return clock_(); }

sqlite3* Access::handle(Database& db) { return db.handle_.get(); }

void Access::exec(Database& db, std::string_view sql) {
  std::string text(sql);
  int rc = sqlite3_exec(db.handle_.get(), text.c_str(), nullptr, nullptr, nullptr);
  // sqlite3_errmsg still holds this error, which raise_sqlite reports.
  if (rc != SQLITE_OK) detail::raise_sqlite(db.handle_.get(), rc, "");
}

detail::Statement* Access::cached(Database& db, std::string_view sql) {
  auto& statements = db.cache_->statements;
  auto it = statements.find(std::string(sql));
  if (it == statements.end()) {
    // Every SQL text of the store is a literal or built from a bounded set of
    // clauses, so the cache stays small; the cap is a guard, not a policy.
    if (statements.size() >= 512) return nullptr;
    it = statements.emplace(std::string(sql), std::make_unique<detail::Statement>(db.handle_.get(), sql)).first;
  }
  if (it->second->in_use_) return nullptr;
  return it->second.get();
}

std::string Access::next_savepoint(Database& db) { return "pw_savepoint_" + std::to_string(++db.cache_->savepoints); }

std::vector<std::string> Access::cached_sql(Database& db) {
  std::vector<std::string> out;
  for (const auto& [sql, statement] : db.cache_->statements) out.push_back(sql);
  return out;
}

namespace {

std::unique_ptr<sqlite3, Database::Closer> connect(const std::string& path, int flags, Error& error) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nullptr);
  std::unique_ptr<sqlite3, Database::Closer> handle(raw);
  if (rc != SQLITE_OK) {
    error = io_error(path + ": open", std::string(raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
    handle.reset();
  }
  return handle;
}

}  // namespace

namespace {

// perfwatch's PRAGMA application_id ("pwdb"), set by migration 005.
constexpr std::int64_t kApplicationId = 0x70776462;

// Refuses, before anything is written, a file this binary must not touch: one
// whose application_id is another program's, a schema newer than this binary,
// or a SQLite database with tables but no perfwatch schema version. Reading
// the header writes nothing (a file that is not SQLite fails here, unchanged).
void check_ours(Database& db) {
  auto one = [&](const char* sql, const char* column) {
    detail::Statement s(Access::handle(db), sql);
    if (!s.step()) detail::raise(ErrorCode::kInternal, std::string(sql) + ": no row");
    return s.get<std::int64_t>(column);
  };
  const std::int64_t app = one("PRAGMA application_id", "application_id");
  const std::int64_t version = one("PRAGMA user_version", "user_version");
  const std::int64_t tables = one("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'", "n");
  const int latest = latest_schema_version();
  if (app != 0 && app != kApplicationId) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%08llx", static_cast<unsigned long long>(app));
    detail::raise(ErrorCode::kInvalidArgument, std::string("not a perfwatch database (its application_id is ") + hex +
                                                   "); perfwatch will not write to it");
  }
  if (version > latest)
    detail::raise(ErrorCode::kInvalidArgument,
                  "schema version " + std::to_string(version) + " is newer than this perfwatch (it knows up to " +
                      std::to_string(latest) + "); use a newer perfwatch, this one will not touch the database");
  if (version == 0 && tables > 0)
    detail::raise(ErrorCode::kInvalidArgument,
                  "not a perfwatch database: a SQLite file with " + std::to_string(tables) +
                      " table(s) and no perfwatch schema version; perfwatch will not write to it");
}

}  // namespace

Result<Database> Database::open(const std::filesystem::path& file, OpenOptions options) {
  Error error;
  auto handle = connect(file.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, error);
  if (!handle) return fail(error);
  Database db(std::move(handle), file.string(), /*read_only=*/false, std::move(options.clock));
  auto configured = detail::guard(db, "open", [&] {
    sqlite3_busy_timeout(Access::handle(db), options.busy_timeout_ms);
    check_ours(db);
    // WAL: the web server's readers never block the writer, nor it them.
    std::string mode;
    {
      detail::Statement s(Access::handle(db), "PRAGMA journal_mode = WAL");
      if (s.step()) mode = s.get<std::string>("journal_mode");
    }
    if (mode != "wal") detail::raise(ErrorCode::kIo, "cannot use WAL mode (journal_mode is '" + mode + "')");
    // synchronous=NORMAL in WAL mode: a commit is in the WAL file (the OS has
    // it) when it returns, without waiting for an fsync. That is durable
    // against a crash or kill -9 of the bench, the runner or the daemon --
    // "nothing measured is lost" -- which is the failure this service meets
    // daily; a power loss or kernel panic may lose the last transactions
    // (never corrupt the file). FULL would fsync every trial insert.
    Access::exec(db, "PRAGMA synchronous = NORMAL");
    Access::exec(db, "PRAGMA cache_size = " + std::to_string(-options.cache_kib));
    Access::exec(db, "PRAGMA mmap_size = " + std::to_string(options.mmap_bytes));
    // After a checkpoint the WAL file is truncated to this size rather than
    // left at its largest (a back-fill can grow it to hundreds of MB).
    Access::exec(db, "PRAGMA journal_size_limit = " + std::to_string(64LL << 20));
    Access::exec(db, "PRAGMA foreign_keys = ON");
    detail::Statement fk(Access::handle(db), "PRAGMA foreign_keys");
    if (!fk.step() || fk.get<std::int64_t>("foreign_keys") != 1)
      detail::raise(ErrorCode::kInternal, "this SQLite cannot enforce foreign keys");
  });
  if (!configured) return fail(configured.error());
  int target = options.schema_version.value_or(latest_schema_version());
  auto version = migrate(db, target);
  if (!version) return fail(version.error());
  db.schema_version_ = *version;
  return db;
}

namespace {

// "file:" URI of a path, for SQLite's URI parameters (uri.html): '%', '?' and
// '#' would end or change the path, so they are percent-encoded.
std::string file_uri(const std::filesystem::path& file, const std::string& query) {
  std::string uri = "file:";
  for (char c : std::filesystem::absolute(file).string()) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

// True when the database's folder cannot be written (a read-only file
// system) and no write-ahead log is left beside the file: then nothing can
// change it, and SQLite may read it as immutable (wal.html: a WAL database
// on read-only media without its -shm file opens only so).
bool frozen(const std::filesystem::path& file) {
  std::error_code ec;
  auto dir = std::filesystem::absolute(file, ec).parent_path();
  if (::access(dir.c_str(), W_OK) == 0) return false;
  auto wal = std::filesystem::file_size(file.string() + "-wal", ec);
  return ec || wal == 0;
}

}  // namespace

Result<Database> Database::open_read_only(const std::filesystem::path& file, OpenOptions options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    return fail(not_found(file.string() + ": open read-only", "no such database file"));
  auto first = open_read_only_as(file, file.string(), SQLITE_OPEN_READONLY, options);
  if (first || first.error().code != ErrorCode::kIo || !frozen(file)) return first;
  // A read-only file system: no -shm can be made, so read it as immutable.
  return open_read_only_as(file, file_uri(file, "mode=ro&immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                           options);
}

Result<Database> Database::open_read_only_as(const std::filesystem::path& file, const std::string& name, int flags,
                                             OpenOptions options) {
  Error error;
  auto handle = connect(name, flags, error);
  if (!handle) return fail(error);
  Database db(std::move(handle), file.string(), /*read_only=*/true, std::move(options.clock));
  auto configured = detail::guard(db, "open read-only", [&] {
    sqlite3_busy_timeout(Access::handle(db), options.busy_timeout_ms);
    // Belt and braces: the connection is read-only, and query_only makes any
    // write a clear error instead of a lock attempt.
    Access::exec(db, "PRAGMA query_only = ON");
    Access::exec(db, "PRAGMA cache_size = " + std::to_string(-options.cache_kib));
    Access::exec(db, "PRAGMA mmap_size = " + std::to_string(options.mmap_bytes));
    detail::Statement s(Access::handle(db), "PRAGMA user_version");
    s.step();
    int version = s.get<int>("user_version");
    int latest = latest_schema_version();
    if (version == 0)
      detail::raise(ErrorCode::kInvalidArgument, "not a perfwatch database (schema version 0)");
    if (version > latest)
      detail::raise(ErrorCode::kInvalidArgument,
                    "schema version " + std::to_string(version) + " is newer than this perfwatch (it knows up to " +
                        std::to_string(latest) + "); use a newer perfwatch");
    if (version < latest)
      detail::raise(ErrorCode::kInvalidArgument,
                    "schema version " + std::to_string(version) + " is older than this perfwatch's " +
                        std::to_string(latest) + "; open it once for writing (perfwatch bench or watch) to migrate it");
    return version;
  });
  if (!configured) return fail(configured.error());
  db.schema_version_ = *configured;
  return db;
}

Transaction::Transaction(Database& db, Mode mode) : db_(&db) {
  status_ = detail::guard(db, "begin transaction", [&] {
    if (sqlite3_get_autocommit(Access::handle(db))) {
      Access::exec(db, mode == Mode::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    } else {
      savepoint_ = Access::next_savepoint(db);
      Access::exec(db, "SAVEPOINT " + savepoint_);
    }
    open_ = true;
  });
}

Transaction::~Transaction() { rollback(); }

Status Transaction::commit() {
  if (!status_) return status_;
  if (!open_) return fail(Error{ErrorCode::kInternal, db_->path() + ": commit", "the transaction has ended"});
  auto done = detail::guard(*db_, "commit", [&] {
    Access::exec(*db_, savepoint_.empty() ? std::string("COMMIT") : "RELEASE " + savepoint_);
  });
  if (done) open_ = false;
  return done;
}

void Transaction::rollback() noexcept {
  if (!open_) return;
  open_ = false;
  sqlite3* h = Access::handle(*db_);
  if (savepoint_.empty()) {
    // An error may already have rolled the transaction back (SQLITE_FULL...).
    if (!sqlite3_get_autocommit(h)) sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
  } else {
    std::string sql = "ROLLBACK TO " + savepoint_ + "; RELEASE " + savepoint_;
    sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr);
  }
}

}  // namespace perfwatch::store
