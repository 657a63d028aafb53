#include "benchmarks/judging_e2e/observed.h"

#include <memory>

#include <sqlite3.h>

namespace judging_e2e {

using perfwatch::fail;
using perfwatch::io_error;

namespace {

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct Finalize {
  void operator()(sqlite3_stmt* st) const { sqlite3_finalize(st); }
};
using DbHandle = std::unique_ptr<sqlite3, CloseDb>;
using Statement = std::unique_ptr<sqlite3_stmt, Finalize>;

std::string text(sqlite3_stmt* st, int col) {
  const unsigned char* t = sqlite3_column_text(st, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

// Runs `sql` and calls row(st) for each row; the error names the database
// and the query.
template <class Row>
perfwatch::Status each_row(sqlite3* db, const std::string& where, const char* sql, Row row) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK)
    return fail(io_error(where, std::string(sqlite3_errmsg(db)) + " in: " + sql));
  Statement st(raw);
  for (;;) {
    int rc = sqlite3_step(st.get());
    if (rc == SQLITE_DONE) return {};
    if (rc != SQLITE_ROW) return fail(io_error(where, std::string(sqlite3_errmsg(db)) + " in: " + sql));
    row(st.get());
  }
}

}  // namespace

perfwatch::Result<Observed> read_database(const std::filesystem::path& path) {
  const std::string where = path.string();
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  DbHandle db(raw);
  if (rc != SQLITE_OK) return fail(io_error(where, std::string("cannot open: ") + (raw ? sqlite3_errmsg(raw) : "?")));
  sqlite3_busy_timeout(db.get(), 5000);

  Observed out;
  auto runs = each_row(db.get(), where,
                       "SELECT c.sha, count(*), sum(r.status = 'ok') FROM runs r JOIN commits c ON c.id = r.commit_id "
                       "GROUP BY c.sha",
                       [&](sqlite3_stmt* st) {
                         out.runs[text(st, 0)] = {sqlite3_column_int(st, 1), sqlite3_column_int(st, 2)};
                       });
  if (!runs) return fail(runs.error());
  // A point's batch: an axis in axes_json since schema version 8, a column before.
  bool axes_json = false;
  auto point_columns = each_row(db.get(), where, "SELECT name FROM pragma_table_info('points')",
                                [&](sqlite3_stmt* st) { axes_json = axes_json || text(st, 0) == "axes_json"; });
  if (!point_columns) return fail(point_columns.error());
  const std::string batch = axes_json ? "json_extract(p.axes_json, '$.batch')" : "p.batch";
  const std::string cell_sql =
      "SELECT c.sha, v.name, " + batch + ", count(DISTINCT r.id) FROM summaries s "
      "JOIN run_variants v ON v.id = s.variant_id JOIN runs r ON r.id = s.run_id "
      "JOIN commits c ON c.id = r.commit_id JOIN points p ON p.id = s.point_id "
      "WHERE r.status = 'ok' AND r.kind <> 'noise' GROUP BY c.sha, v.name, " + batch;
  auto cell_runs = each_row(
      db.get(), where, cell_sql.c_str(),
      [&](sqlite3_stmt* st) {
        out.cell_runs[{text(st, 0), text(st, 1), sqlite3_column_int(st, 2)}] = sqlite3_column_int(st, 3);
      });
  if (!cell_runs) return fail(cell_runs.error());
  const std::string comparison_sql =
      "SELECT c.sha, a.sha, x.basis, x.variant, " + batch + ", x.verdict FROM comparisons x "
      "JOIN commits c ON c.id = x.commit_id JOIN commits a ON a.id = x.against_commit_id "
      "JOIN points p ON p.id = x.point_id";
  auto comparisons = each_row(
      db.get(), where, comparison_sql.c_str(),
      [&](sqlite3_stmt* st) {
        out.comparisons.push_back(
            {text(st, 0), text(st, 1), text(st, 2), text(st, 3), sqlite3_column_int(st, 4), text(st, 5)});
      });
  if (!comparisons) return fail(comparisons.error());
  // Counted: not withdrawn by judging (since schema version 6; databases of
  // older perfwatch builds have no withdrawal column) and not acknowledged
  // by a person. A flag that judging itself closed as recovered or as the
  // recovery (schema version 11's alert groups, ack_by 'judge') was raised
  // and announced: it counts. Nobody acknowledges anything in these
  // histories, so before version 11 every acknowledged flag was judging's.
  bool withdrawals = false;
  auto columns = each_row(db.get(), where, "SELECT name FROM pragma_table_info('flags')",
                          [&](sqlite3_stmt* st) { withdrawals = withdrawals || text(st, 0) == "withdrawn_at"; });
  if (!columns) return fail(columns.error());
  const std::string flag_sql =
      "SELECT c.sha, f.variant, " + batch + ", f.kind, f.magnitude_rel, "
      "coalesce(json_extract(f.detail_json, '$.basis'), ''), " +
      (withdrawals ? "(f.ack_at IS NULL OR f.ack_by = 'judge') AND f.withdrawn_at IS NULL, " : "f.ack_at IS NULL, ") +
      "coalesce(json_extract(f.detail_json, '$.runs'), -1), "
      "coalesce(json_extract(f.detail_json, '$.against_runs'), -1), "
      "coalesce(json_extract(f.detail_json, '$.against'), ''), "
      "coalesce(json_extract(f.detail_json, '$.started_at'), '') "
      "FROM flags f JOIN commits c ON c.id = f.commit_id JOIN points p ON p.id = f.point_id ORDER BY f.id";
  auto flags = each_row(
      db.get(), where, flag_sql.c_str(),
      [&](sqlite3_stmt* st) {
        ObservedFlag f;
        f.sha = text(st, 0);
        f.variant = text(st, 1);
        f.batch = sqlite3_column_int(st, 2);
        f.kind = text(st, 3);
        f.magnitude_rel = sqlite3_column_double(st, 4);
        f.basis = text(st, 5);
        f.open = sqlite3_column_int(st, 6) != 0;
        f.runs = sqlite3_column_int(st, 7);
        f.against_runs = sqlite3_column_int(st, 8);
        f.against_sha = text(st, 9);
        f.started_at = text(st, 10);
        out.flags.push_back(std::move(f));
      });
  if (!flags) return fail(flags.error());
  return out;
}

}  // namespace judging_e2e
