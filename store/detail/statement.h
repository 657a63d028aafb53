// Inside store/ only: prepared statements, typed binds and checked columns,
// and the one place where SQLite failures become perfwatch::Error.
//
// Store code reads like SQLiteCpp's: a failing SQLite call throws a Failure,
// and every public store function runs its body in guard(), which turns the
// Failure into an Error whose where is "<db file>: <operation>". No Failure
// ever leaves store/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/database.h"

struct sqlite3;
struct sqlite3_stmt;

namespace perfwatch::store::detail {

// What went wrong, without the where (guard adds it).
struct Failure {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

[[noreturn]] void raise(ErrorCode code, std::string message);

// The error of the last SQLite call on `db` that returned `rc`.
[[noreturn]] void raise_sqlite(sqlite3* db, int rc, std::string_view doing);

// A prepared statement, finalised by its owner (this object).
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);  // throws Failure
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Typed binds by parameter name (":run"). Binding a name the statement
  // does not have is a Failure; so is stepping with a parameter left unbound.
  Statement& bind(std::string_view name, std::int64_t value);
  Statement& bind(std::string_view name, int value) { return bind(name, static_cast<std::int64_t>(value)); }
  Statement& bind(std::string_view name, bool value) { return bind(name, static_cast<std::int64_t>(value ? 1 : 0)); }
  Statement& bind(std::string_view name, double value);
  Statement& bind(std::string_view name, std::string_view value);
  Statement& bind(std::string_view name, const std::string& value) { return bind(name, std::string_view(value)); }
  Statement& bind(std::string_view name, const char* value) { return bind(name, std::string_view(value)); }
  Statement& bind(std::string_view name, const nlohmann::json& value);  // as JSON text
  Statement& bind_null(std::string_view name);
  template <class T>
  Statement& bind(std::string_view name, const std::optional<T>& value) {
    return value ? bind(name, *value) : bind_null(name);
  }

  // Steps once: true with a row to read, false when done.
  bool step();
  // Steps expecting no row (INSERT/UPDATE/DELETE without RETURNING).
  void run();
  // Ready to run again: reset, bindings cleared. Never fails.
  void reset() noexcept;

  // Checked column access by name: an unknown column, a NULL into a
  // non-optional, or a value of the wrong type is a Failure.
  template <class T>
  T get(std::string_view column) const;

  bool is_null(std::string_view column) const;

  // For "INSERT/UPDATE ... RETURNING <column>" of one row: steps, reads the
  // column, and steps the statement to its end, so that the enclosing
  // transaction can commit (a statement left mid-way keeps it busy). Outside
  // a transaction the write commits at that last step, so its error (a full
  // disk) is raised here, not lost in a reset.
  template <class T>
  T returning(std::string_view column) {
    if (!step()) raise(ErrorCode::kInternal, "no row returned by: " + sql_);
    T value = get<T>(column);
    if (step()) raise(ErrorCode::kInternal, "more than one row returned by: " + sql_);
    reset();
    return value;
  }

  // Rows changed by the last run() on this connection.
  std::int64_t changes() const;
  std::int64_t last_insert_rowid() const;

  const std::string& sql() const { return sql_; }

 private:
  friend struct Access;
  friend class Query;
  int column_index(std::string_view column) const;
  int bind_index(std::string_view name);
  void check_bound() const;

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  std::vector<bool> bound_;
  // Column names in result order, read once: a lookup is a short linear
  // search without allocation (rows are read column by column, by name).
  mutable std::vector<std::string> columns_;
  bool in_use_ = false;
};

template <> std::int64_t Statement::get<std::int64_t>(std::string_view column) const;
template <> int Statement::get<int>(std::string_view column) const;
template <> bool Statement::get<bool>(std::string_view column) const;
template <> double Statement::get<double>(std::string_view column) const;
template <> std::string Statement::get<std::string>(std::string_view column) const;
template <> nlohmann::json Statement::get<nlohmann::json>(std::string_view column) const;
template <> std::optional<std::int64_t> Statement::get<std::optional<std::int64_t>>(std::string_view column) const;
template <> std::optional<int> Statement::get<std::optional<int>>(std::string_view column) const;
template <> std::optional<double> Statement::get<std::optional<double>>(std::string_view column) const;
template <> std::optional<std::string> Statement::get<std::optional<std::string>>(std::string_view column) const;

// Store-internal access to a Database.
struct Access {
  static sqlite3* handle(Database& db);
  // Runs SQL text of one or more statements with no parameters (migrations, PRAGMAs).
  static void exec(Database& db, std::string_view sql);
  // The connection's cached statement for this SQL, prepared on first use;
  // nullptr while it is in use (Query then prepares one of its own).
  static Statement* cached(Database& db, std::string_view sql);
  static std::string next_savepoint(Database& db);
  // The SQL of every statement in the connection's cache (tests check their plans).
  static std::vector<std::string> cached_sql(Database& db);
};

// One use of a statement: the connection's cached one for this SQL (hot
// paths pay for preparing once), or a fresh one if the cached one is busy
// (a nested use of the same SQL). Reset when the Query goes out of scope, so
// a cached statement never holds a read snapshot open.
class Query {
 public:
  Query(Database& db, std::string_view sql);
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query();
  Statement* operator->() { return stmt_; }
  Statement& operator*() { return *stmt_; }

 private:
  std::unique_ptr<Statement> own_;
  Statement* stmt_;
};

// Runs `body` and returns its value as a Result (void -> Status), turning a
// Failure (or any exception) into an Error with where "<db>: <operation>".
template <class F>
auto guard(const Database& db, std::string_view operation, F&& body) -> Result<std::invoke_result_t<F>> {
  using R = std::invoke_result_t<F>;
  auto where = [&] { return db.path() + ": " + std::string(operation); };
  try {
    if constexpr (std::is_void_v<R>) {
      body();
      return {};
    } else {
      return body();
    }
  } catch (const Failure& f) {
    return fail(Error{f.code, where(), f.message});
  } catch (const nlohmann::json::exception& e) {
    return fail(Error{ErrorCode::kInternal, where(), std::string("stored JSON: ") + e.what()});
  } catch (const std::exception& e) {
    return fail(Error{ErrorCode::kInternal, where(), e.what()});
  }
}

// Throws the error of a Status/Result returned by another store call.
template <class R>
void check(const R& r) {
  if (!r) raise(r.error().code, r.error().message);
}

}  // namespace perfwatch::store::detail
