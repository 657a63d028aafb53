#include "store/detail/statement.h"

#include <sqlite3.h>

#include "common/text.h"

namespace perfwatch::store::detail {

void raise(ErrorCode code, std::string message) { throw Failure{code, std::move(message)}; }

namespace {

ErrorCode code_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
      return ErrorCode::kInvalidArgument;  // the caller's data does not fit
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return ErrorCode::kTimeout;  // another connection held the lock past busy_timeout
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_PERM:
    case SQLITE_PROTOCOL:
    case SQLITE_NOLFS:
    case SQLITE_AUTH:
      return ErrorCode::kIo;
    default:
      return ErrorCode::kInternal;  // SQL errors and misuse are bugs in the store
  }
}

}  // namespace

void raise_sqlite(sqlite3* db, int rc, std::string_view doing) {
  std::string message(doing);
  if (!message.empty()) message += ": ";
  // The words a user acts on first: the disk is full (SQLITE_FULL is also
  // the max_page_count limit, which is full too).
  if ((rc & 0xff) == SQLITE_FULL) message += "disk full: ";
  message += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (";
  message += sqlite3_errstr(rc);
  message += ")";
  throw Failure{code_of(rc), std::move(message)};
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db, sql_.data(), static_cast<int>(sql_.size()), SQLITE_PREPARE_PERSISTENT, &stmt_,
                              &tail);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    raise_sqlite(db, rc, "prepare");
  }
  if (stmt_ == nullptr) raise(ErrorCode::kInternal, "prepare: empty SQL");
  // One statement per Statement: trailing SQL would be silently ignored.
  for (; tail && *tail; ++tail)
    if (!isspace(static_cast<unsigned char>(*tail)) && *tail != ';') {
      sqlite3_finalize(stmt_);
      stmt_ = nullptr;
      raise(ErrorCode::kInternal, "prepare: more than one statement in: " + sql_);
    }
  bound_.assign(static_cast<std::size_t>(sqlite3_bind_parameter_count(stmt_)) + 1, false);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

int Statement::bind_index(std::string_view name) {
  // sqlite3_bind_parameter_index needs a NUL-terminated name.
  char buffer[64];
  if (name.size() >= sizeof buffer) raise(ErrorCode::kInternal, "bind: parameter name too long");
  name.copy(buffer, name.size());
  buffer[name.size()] = '\0';
  int index = sqlite3_bind_parameter_index(stmt_, buffer);
  if (index == 0) raise(ErrorCode::kInternal, "bind: no parameter " + std::string(name) + " in: " + sql_);
  bound_[static_cast<std::size_t>(index)] = true;
  return index;
}

Statement& Statement::bind(std::string_view name, std::int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, bind_index(name), value);
  if (rc != SQLITE_OK) raise_sqlite(db_, rc, "bind " + std::string(name));
  return *this;
}

Statement& Statement::bind(std::string_view name, double value) {
  int rc = sqlite3_bind_double(stmt_, bind_index(name), value);
  if (rc != SQLITE_OK) raise_sqlite(db_, rc, "bind " + std::string(name));
  return *this;
}

Statement& Statement::bind(std::string_view name, std::string_view value) {
  int rc = sqlite3_bind_text64(stmt_, bind_index(name), value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) raise_sqlite(db_, rc, "bind " + std::string(name));
  return *this;
}

Statement& Statement::bind(std::string_view name, const nlohmann::json& value) {
  return bind(name, std::string_view(json_text(value)));
}

Statement& Statement::bind_null(std::string_view name) {
  int rc = sqlite3_bind_null(stmt_, bind_index(name));
  if (rc != SQLITE_OK) raise_sqlite(db_, rc, "bind " + std::string(name));
  return *this;
}

void Statement::check_bound() const {
  for (std::size_t i = 1; i < bound_.size(); ++i)
    if (!bound_[i]) {
      const char* name = sqlite3_bind_parameter_name(stmt_, static_cast<int>(i));
      raise(ErrorCode::kInternal, std::string("parameter ") + (name ? name : "?") + " not bound in: " + sql_);
    }
}

bool Statement::step() {
  if (sqlite3_stmt_busy(stmt_) == 0) check_bound();
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // The statement's error code is the one to report; reset so it can be reused.
  sqlite3_reset(stmt_);
  raise_sqlite(db_, rc, "");
}

void Statement::run() {
  if (step()) raise(ErrorCode::kInternal, "statement returned a row where none was expected: " + sql_);
}

void Statement::reset() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  std::fill(bound_.begin(), bound_.end(), false);
}

int Statement::column_index(std::string_view column) const {
  if (columns_.empty()) {
    int n = sqlite3_column_count(stmt_);
    for (int i = 0; i < n; ++i) columns_.emplace_back(sqlite3_column_name(stmt_, i));
  }
  for (std::size_t i = 0; i < columns_.size(); ++i)
    if (columns_[i] == column) return static_cast<int>(i);
  raise(ErrorCode::kInternal, "no column " + std::string(column) + " in: " + sql_);
}

bool Statement::is_null(std::string_view column) const {
  return sqlite3_column_type(stmt_, column_index(column)) == SQLITE_NULL;
}

namespace {

[[noreturn]] void wrong_type(std::string_view column, int type, std::string_view wanted) {
  static constexpr std::string_view kNames[] = {"?", "integer", "real", "text", "blob", "null"};
  raise(ErrorCode::kInternal, "column " + std::string(column) + " is " + std::string(kNames[type]) + ", not " +
                                  std::string(wanted));
}

}  // namespace

template <>
std::optional<std::int64_t> Statement::get<std::optional<std::int64_t>>(std::string_view column) const {
  int i = column_index(column);
  int type = sqlite3_column_type(stmt_, i);
  if (type == SQLITE_NULL) return std::nullopt;
  if (type != SQLITE_INTEGER) wrong_type(column, type, "integer");
  return sqlite3_column_int64(stmt_, i);
}

template <>
std::int64_t Statement::get<std::int64_t>(std::string_view column) const {
  auto v = get<std::optional<std::int64_t>>(column);
  if (!v) raise(ErrorCode::kInternal, "column " + std::string(column) + " is null");
  return *v;
}

template <>
std::optional<int> Statement::get<std::optional<int>>(std::string_view column) const {
  auto v = get<std::optional<std::int64_t>>(column);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

template <>
int Statement::get<int>(std::string_view column) const {
  return static_cast<int>(get<std::int64_t>(column));
}

template <>
bool Statement::get<bool>(std::string_view column) const {
  return get<std::int64_t>(column) != 0;
}

template <>
std::optional<double> Statement::get<std::optional<double>>(std::string_view column) const {
  int i = column_index(column);
  int type = sqlite3_column_type(stmt_, i);
  if (type == SQLITE_NULL) return std::nullopt;
  if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) wrong_type(column, type, "a number");
  return sqlite3_column_double(stmt_, i);
}

template <>
double Statement::get<double>(std::string_view column) const {
  auto v = get<std::optional<double>>(column);
  if (!v) raise(ErrorCode::kInternal, "column " + std::string(column) + " is null");
  return *v;
}

template <>
std::optional<std::string> Statement::get<std::optional<std::string>>(std::string_view column) const {
  int i = column_index(column);
  int type = sqlite3_column_type(stmt_, i);
  if (type == SQLITE_NULL) return std::nullopt;
  if (type != SQLITE_TEXT) wrong_type(column, type, "text");
  auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i)));
}

template <>
std::string Statement::get<std::string>(std::string_view column) const {
  auto v = get<std::optional<std::string>>(column);
  if (!v) raise(ErrorCode::kInternal, "column " + std::string(column) + " is null");
  return std::move(*v);
}

template <>
nlohmann::json Statement::get<nlohmann::json>(std::string_view column) const {
  auto text = get<std::string>(column);
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) raise(ErrorCode::kInternal, "column " + std::string(column) + " is not valid JSON");
  return doc;
}

std::int64_t Statement::changes() const { return sqlite3_changes64(db_); }
std::int64_t Statement::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

Query::Query(Database& db, std::string_view sql) {
  stmt_ = Access::cached(db, sql);
  if (stmt_ == nullptr) {
    own_ = std::make_unique<Statement>(Access::handle(db), sql);
    stmt_ = own_.get();
  } else {
    stmt_->in_use_ = true;
  }
}

Query::~Query() {
  stmt_->reset();
  stmt_->in_use_ = false;
}

}  // namespace perfwatch::store::detail
