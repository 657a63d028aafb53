#include "store/migrations.h"

#include <algorithm>
#include <charconv>

#include "schemas/schema.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::Access;

namespace {

constexpr std::string_view kPrefix = "sql/";
constexpr std::string_view kSuffix = ".sql";

// "sql/002_watch.sql" -> 2; 0 when the name is not NNN_<what>.sql.
int version_of(std::string_view path) {
  auto name = path.substr(kPrefix.size());
  auto underscore = name.find('_');
  if (underscore == 0 || underscore == std::string_view::npos) return 0;
  int version = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + underscore, version);
  if (ec != std::errc() || end != name.data() + underscore) return 0;
  return version;
}

int read_user_version(Database& db) {
  detail::Query q(db, "PRAGMA user_version");
  return q->returning<int>("user_version");
}

// SQLite's way of changing a table that others refer to
// (lang_altertable.html, "Making Other Kinds Of Table Schema Changes"):
// foreign keys off while a migration runs -- set outside the transaction,
// where the pragma takes effect -- so that rebuilding a table (create the new
// one, copy, drop the old, rename) does not delete or orphan the rows that
// refer to it; on again when it is done, whatever happened.
class ForeignKeysOff {
 public:
  explicit ForeignKeysOff(Database& db) : db_(db) { Access::exec(db_, "PRAGMA foreign_keys = OFF"); }
  ForeignKeysOff(const ForeignKeysOff&) = delete;
  ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;
  ~ForeignKeysOff() {
    try {
      Access::exec(db_, "PRAGMA foreign_keys = ON");
    } catch (...) {
      // Only fails on a closed or broken connection, which nothing uses after.
    }
  }

 private:
  Database& db_;
};

// Inside the migration's transaction, before it commits: every reference
// still finds its row (PRAGMA foreign_key_check names the first that does not).
void check_foreign_keys(Database& db, const std::string& migration) {
  detail::Statement s(Access::handle(db), "PRAGMA foreign_key_check");
  if (!s.step()) return;
  detail::raise(ErrorCode::kInternal, migration + ": leaves a row of " + s.get<std::string>("table") + " (rowid " +
                                          std::to_string(s.get<std::optional<std::int64_t>>("rowid").value_or(0)) +
                                          ") referring to a missing row of " + s.get<std::string>("parent"));
}

}  // namespace

Result<std::vector<Migration>> migrations() {
  std::vector<Migration> out;
  for (const auto& path : schemas::paths()) {
    std::string_view p(path);
    if (!p.starts_with(kPrefix) || !p.ends_with(kSuffix)) continue;
    int version = version_of(p);
    if (version <= 0)
      return fail(Error{ErrorCode::kInternal, "schemas/" + path, "a migration is named NNN_<what>.sql"});
    out.push_back({version, path, std::string(*schemas::file(path))});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].version != static_cast<int>(i) + 1)
      return fail(Error{ErrorCode::kInternal, "schemas/" + out[i].name,
                        "expected migration " + std::to_string(i + 1) + " here: migrations are numbered 1..N"});
  return out;
}

int latest_schema_version() {
  auto all = migrations();
  return all ? static_cast<int>(all->size()) : 0;
}

Result<int> schema_version(Database& db) {
  return detail::guard(db, "read schema version", [&] { return read_user_version(db); });
}

Result<int> migrate(Database& db, int target) {
  auto all = migrations();
  if (!all) return fail(all.error());
  int latest = static_cast<int>(all->size());
  return detail::guard(db, "migrate", [&] {
    if (target < 0 || target > latest)
      detail::raise(ErrorCode::kInvalidArgument, "no schema version " + std::to_string(target) +
                                                     " (this perfwatch knows 1.." + std::to_string(latest) + ")");
    int version = read_user_version(db);
    if (version > latest)
      detail::raise(ErrorCode::kInvalidArgument,
                    "schema version " + std::to_string(version) + " is newer than this perfwatch (it knows up to " +
                        std::to_string(latest) + "); use a newer perfwatch, this one will not touch the database");
    if (version > target)
      detail::raise(ErrorCode::kInvalidArgument, "schema version " + std::to_string(version) +
                                                     " is above the requested " + std::to_string(target));
    while (version < target) {
      ForeignKeysOff fk_off(db);
      Transaction tx(db, Transaction::Mode::kImmediate);
      detail::check(tx.status());
      // Another process may have migrated while we waited for the lock.
      version = read_user_version(db);
      if (version >= target) break;
      const Migration& next = (*all)[static_cast<std::size_t>(version)];
      try {
        Access::exec(db, next.sql);
      } catch (const detail::Failure& f) {
        detail::raise(f.code, next.name + ": " + f.message);
      }
      check_foreign_keys(db, next.name);
      Access::exec(db, "PRAGMA user_version = " + std::to_string(next.version));
      detail::check(tx.commit());
      version = next.version;
    }
    return version;
  });
}

}  // namespace perfwatch::store
