// Storage faults and foreign files: a database perfwatch must not touch is
// refused before anything is written to it; a full disk is named; a database
// on a read-only file system can still be read; the queue tells a stop from
// a crash; runs and process groups left by a dead process are found.
#include <sqlite3.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "store/database.h"
#include "store/migrations.h"
#include "store/process_store.h"
#include "store/queue_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

namespace fs = std::filesystem;
using testing::TempDbPath;

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A database written with the sqlite3 library alone, in rollback-journal mode
// (so that any write by perfwatch -- even switching to WAL -- changes the file).
void make_foreign(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, ("PRAGMA journal_mode = DELETE; " + sql).c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_close(db);
}

void expect_refused_untouched(const fs::path& file, const std::string& words) {
  const std::string before = bytes_of(file);
  auto db = Database::open(file);
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(db.error().to_string().find(words), std::string::npos) << db.error().to_string();
  EXPECT_NE(db.error().where.find(file.string()), std::string::npos);
  EXPECT_EQ(bytes_of(file), before) << "the refused file was written to";
  EXPECT_FALSE(fs::exists(file.string() + "-wal"));
}

TEST(Refusal, ANewerPerfwatchDatabaseIsRefusedBeforeAnythingIsWritten) {
  TempDbPath tmp;
  make_foreign(tmp.path(), "CREATE TABLE runs (id INTEGER PRIMARY KEY); PRAGMA user_version = " +
                               std::to_string(latest_schema_version() + 1) + ";");
  expect_refused_untouched(tmp.path(), "newer than this perfwatch");
}

TEST(Refusal, ASqliteFileThatIsNotPerfwatchsIsRefusedBeforeAnythingIsWritten) {
  TempDbPath tmp;
  make_foreign(tmp.path(), "CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT); INSERT INTO photos VALUES (1, 'a');");
  expect_refused_untouched(tmp.path(), "not a perfwatch database");
}

TEST(Refusal, AnotherApplicationsFileIsRefusedEvenWhenEmpty) {
  TempDbPath tmp;
  make_foreign(tmp.path(), "PRAGMA application_id = 42;");
  expect_refused_untouched(tmp.path(), "application_id is 0x0000002a");
}

TEST(Refusal, ANewDatabaseIsMarkedAsPerfwatchs) {
  TempDbPath tmp;
  { PW_UNWRAP(db, Database::open(tmp.path())); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(tmp.path().c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA application_id", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(s, 0), 0x70776462);  // "pwdb"
  sqlite3_finalize(s);
  sqlite3_close(raw);
  // And it opens again.
  PW_UNWRAP(again, Database::open(tmp.path()));
}

// A small tmpfs, mounted for one test (root only: skipped elsewhere).
class Tmpfs {
 public:
  explicit Tmpfs(const std::string& size) {
    dir_ = fs::temp_directory_path() / ("perfwatch_tmpfs_" + std::to_string(::getpid()) + "_" + std::to_string(++n_));
    fs::create_directories(dir_);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  bool mounted() const { return mounted_; }
  bool remount_read_only() {
    return ::mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }
  fs::path operator/(const std::string& name) const { return dir_ / name; }

 private:
  static inline int n_ = 0;
  fs::path dir_;
  bool mounted_ = false;
};

TEST(Faults, AFullDiskIsNamedInTheError) {
  Tmpfs disk("2m");  // room for the schema (nine migrations, their WAL) and then some
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  PW_UNWRAP(db, Database::open(disk / "perfwatch.db"));
  RepoWriter repos(db);
  RunWriter runs(db);
  PW_UNWRAP(repo, repos.ensure_repo({.path = "/src/k", .name = "k"}));
  PW_UNWRAP(commit, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1), .subject = "a"}));
  PW_UNWRAP(run, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(variant, runs.add_variant({.run_id = run, .name = "base", .is_baseline = true}));
  PW_UNWRAP(point, runs.ensure_point(testing::point_record(8)));
  Status last;
  std::string padding(4000, 'x');
  for (int i = 1; i <= 100000 && last; ++i) {
    auto added = runs.add_variant({.run_id = run, .name = "v" + std::to_string(i) + padding});
    if (!added) last = fail(added.error());
  }
  // Before the fix, a write that committed at the end of an INSERT ... RETURNING
  // lost its error (the full disk) in a reset, and reported success.
  ASSERT_FALSE(last.has_value()) << "the 600 KiB disk never filled";
  EXPECT_EQ(last.error().code, ErrorCode::kIo);
  EXPECT_NE(last.error().message.find("disk full"), std::string::npos) << last.error().to_string();
  (void)variant;
  (void)point;
}

TEST(Faults, ADatabaseOnAReadOnlyFileSystemCanBeRead) {
  Tmpfs disk("8m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  const fs::path file = disk / "perfwatch.db";
  {
    PW_UNWRAP(db, Database::open(file));
    PW_UNWRAP(repo, RepoWriter(db).ensure_repo({.path = "/src/k", .name = "k"}));
    PW_ASSERT_OK(RepoWriter(db).put_commit({.repo_id = repo, .sha = testing::sha_of(1), .subject = "on ro media"}));
  }
  ASSERT_FALSE(fs::exists(file.string() + "-wal")) << "a clean close leaves no WAL";
  ASSERT_TRUE(disk.remount_read_only());
  PW_UNWRAP(reader, Database::open_read_only(file));
  PW_UNWRAP(repos, RepoReader(reader).repos());
  ASSERT_EQ(repos.size(), 1u);
  PW_UNWRAP(c, RepoReader(reader).find_commit(repos[0].id, testing::sha_of(1)));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->subject, "on ro media");
  // Writing is refused with the file system's words, not done.
  EXPECT_FALSE(Database::open(file).has_value());
}

TEST(StopsAndAttempts, AStopIsNotCountedAsAnAttempt) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  PW_UNWRAP(repo, RepoWriter(db).ensure_repo({.path = "/src/k", .name = "k"}));
  JobQueue queue(db);
  PW_UNWRAP(job, queue.enqueue({.repo_id = repo, .commit_sha = testing::sha_of(1), .branch = "main"}));
  // Stopped five times (more than max_attempts = 3): requeued every time.
  for (int i = 0; i < 5; ++i) {
    PW_UNWRAP(claimed, queue.claim_next());
    ASSERT_TRUE(claimed.has_value()) << "stop " << i << ": the job was given up";
    PW_ASSERT_OK(queue.interrupted_by_stop(claimed->id, "interrupted: stop"));
    PW_UNWRAP(r, queue.recover_after_crash(3));
    ASSERT_EQ(r.requeued.size(), 1u) << "stop " << i;
  }
  PW_UNWRAP(last, queue.claim_next());
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->attempts, 6);
  EXPECT_EQ(last->stops, 5);
  // Crashes still count: three without a stop and it is given up.
  PW_UNWRAP(r1, queue.recover_after_crash(3));
  ASSERT_EQ(r1.requeued.size(), 1u);
  PW_UNWRAP(c2, queue.claim_next());
  PW_UNWRAP(r2, queue.recover_after_crash(3));
  ASSERT_EQ(r2.requeued.size(), 1u);
  PW_UNWRAP(c3, queue.claim_next());
  PW_UNWRAP(r3, queue.recover_after_crash(3));
  EXPECT_TRUE(r3.requeued.empty());
  ASSERT_EQ(r3.gave_up.size(), 1u);
  EXPECT_EQ(r3.gave_up[0].state, JobState::kGaveUp);
  EXPECT_EQ(r3.gave_up[0].stops, 5);
  EXPECT_NE(r3.gave_up[0].message.find("gave up after 3 attempt(s), each cut off (5 interruption(s) by a stop not counted)"),
            std::string::npos)
      << r3.gave_up[0].message;
  (void)job;
  (void)c2;
  (void)c3;
  // Only a running job can be interrupted.
  EXPECT_FALSE(queue.interrupted_by_stop(r3.gave_up[0].id, "x").has_value());
}

TEST(Owners, ARunWhoseProcessDiedIsCutOffAndALiveOnesIsNot) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  PW_UNWRAP(repo, RepoWriter(db).ensure_repo({.path = "/src/k", .name = "k"}));
  PW_UNWRAP(commit, RepoWriter(db).put_commit({.repo_id = repo, .sha = testing::sha_of(1), .subject = "a"}));
  RunWriter runs(db);
  PW_UNWRAP(dead, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(live, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(elsewhere, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(old_boot, runs.start_run({.commit_id = commit}));
  PW_UNWRAP(unowned, runs.start_run({.commit_id = commit}));
  ProcessStore processes(db);
  PW_ASSERT_OK(processes.set_run_owner(dead, {.pid = 100, .start_ticks = 5, .boot_id = "b1", .host = "h"}));
  PW_ASSERT_OK(processes.set_run_owner(live, {.pid = 200, .start_ticks = 6, .boot_id = "b1", .host = "h"}));
  PW_ASSERT_OK(processes.set_run_owner(elsewhere, {.pid = 100, .start_ticks = 5, .boot_id = "b9", .host = "other"}));
  PW_ASSERT_OK(processes.set_run_owner(old_boot, {.pid = 200, .start_ticks = 6, .boot_id = "b0", .host = "h"}));
  auto alive = [](const ProcessOwner& o) { return o.pid == 200; };
  PW_UNWRAP(cut, processes.cut_off_orphaned_runs("h", "b1", alive));
  EXPECT_EQ(cut, (std::vector<RunId>{dead, old_boot}));
  PW_UNWRAP(d, RunReader(db).run(dead));
  EXPECT_EQ(d.status, RunStatus::kCutOff);
  EXPECT_NE(d.message.find("pid 100 on h"), std::string::npos) << d.message;
  for (RunId id : {live, elsewhere, unowned}) {
    PW_UNWRAP(r, RunReader(db).run(id));
    EXPECT_EQ(r.status, RunStatus::kRunning) << id;
  }
  PW_UNWRAP(again, processes.cut_off_orphaned_runs("h", "b1", alive));
  EXPECT_TRUE(again.empty());
}

TEST(Owners, ProcessGroupsAreRecordedUntilTheyEnd) {
  TempDbPath tmp;
  PW_UNWRAP(db, Database::open(tmp.path()));
  ProcessStore processes(db);
  ChildGroupRecord g{.pgid = 4242, .start_ticks = 77, .owner = {.pid = 10, .start_ticks = 3, .boot_id = "b", .host = "h"},
                     .what = "bench of run 1"};
  PW_UNWRAP(id, processes.add_group(g));
  PW_UNWRAP(other, processes.add_group({.pgid = 99, .start_ticks = 1, .owner = {.pid = 1, .host = "elsewhere"}}));
  PW_UNWRAP(here, processes.groups_on("h"));
  ASSERT_EQ(here.size(), 1u);
  EXPECT_EQ(here[0].pgid, 4242);
  EXPECT_EQ(here[0].start_ticks, 77u);
  EXPECT_EQ(here[0].owner, g.owner);
  EXPECT_EQ(here[0].what, "bench of run 1");
  PW_ASSERT_OK(processes.remove_group(id));
  PW_UNWRAP(none, processes.groups_on("h"));
  EXPECT_TRUE(none.empty());
  (void)other;
}

}  // namespace
}  // namespace perfwatch::store
