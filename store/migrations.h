// Schema migrations: the SQL files schemas/sql/NNN_<what>.sql, embedded in
// the binary, numbered from 001 without gaps. The database's schema version
// is PRAGMA user_version: the number of the last file applied (0 = empty).
//
// Database::open calls migrate(); these are for tools and tests.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace perfwatch::store {

struct Migration {
  int version = 0;   // NNN
  std::string name;  // "sql/002_watch.sql"
  std::string sql;
};

// The embedded migrations in order. Fails (kInternal) if their numbers are
// not 1..N without gaps or duplicates: a build error, not a user's.
Result<std::vector<Migration>> migrations();

// The newest schema version this binary knows.
int latest_schema_version();

// Applies, in order, every migration above the database's version up to
// `target`, each in its own IMMEDIATE transaction together with its
// user_version bump, so a crash leaves the database at a whole version.
// Foreign keys are off while a migration runs (so one may rebuild a table
// that others refer to, as SQLite documents) and checked before it commits:
// a migration that leaves a reference without its row fails (kInternal) and
// is rolled back.
// Safe against a concurrent migrator (the version is re-read under the lock).
// Refuses (kInvalidArgument) a database whose version is above `target`:
// a newer perfwatch wrote it, and this binary must not touch it. Returns the
// version reached.
Result<int> migrate(Database& db, int target);

// The database's current PRAGMA user_version.
Result<int> schema_version(Database& db);

}  // namespace perfwatch::store
