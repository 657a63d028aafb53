// A run whose trials cannot be stored stops at once: store_failed, the error
// named ("disk full"), and the bench is not driven through the trials that
// would be thrown away. The database lives on a small tmpfs that the test
// fills up once the run is under way (root only: skipped elsewhere).
#include <sys/mount.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <gmock/gmock.h>

#include "daemon/bench_commit.h"
#include "store/run_store.h"
#include "tests/daemon/daemon_fixture.h"

namespace perfwatch::daemon::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

class Tmpfs {
 public:
  explicit Tmpfs(const fs::path& dir, const std::string& size) : dir_(dir) {
    fs::create_directories(dir_);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~Tmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  // Writes a file until the file system has no room left.
  void fill() {
    std::FILE* f = std::fopen((dir_ / "filler").c_str(), "wb");
    if (!f) return;
    std::string block(4096, 'f');
    while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  }

 private:
  fs::path dir_;
  bool mounted_ = false;
};

// Fills the disk at the first progress report (a trial was stored).
struct FillingReporter : BenchReporter {
  Tmpfs* disk = nullptr;
  int reports = 0;
  void stage(const std::string&) override {}
  void progress(const runner::SweepProgress&) override {
    if (++reports == 1) disk->fill();
  }
};

class StorageTest : public DaemonTest {};

TEST_F(StorageTest, ARunWhoseTrialsCannotBeStoredStopsAtOnceAndSaysDiskFull) {
  Tmpfs disk(state_ / "small", "2m");
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  json m = fake_manifest();
  m["trials"] = {{"min", 200}, {"max", 200}, {"target_rel_ci", 0.001}, {"budget_s", 60}};
  m["bench"]["env"] = {{"FAKE_BENCH_LOG", (state_ / "requests").string()}};
  std::string a = commit(m, "a", {{"src/k.c", "1"}});
  auto db = store::Database::open(state_ / "small" / "perfwatch.db");
  ASSERT_TRUE(db.has_value()) << db.error().to_string();
  BenchOptions o;
  o.repo = repo_.path();
  o.rev = a;
  o.state_dir = state_ / "work";
  FillingReporter reporter;
  reporter.disk = &disk;
  auto out = bench_commit(*db, o, reporter);
  ASSERT_GE(reporter.reports, 1);
  if (out) {
    EXPECT_EQ(out->status, store::RunStatus::kStoreFailed);
    EXPECT_THAT(out->message, HasSubstr("disk full"));
    EXPECT_LT(out->trials, 20);
  } else {
    // Not even the run's end could be written: the error says why.
    EXPECT_THAT(out.error().to_string(), HasSubstr("disk full"));
  }
  // 2 variants x 2 points x 200 trials were asked for; the run ended within
  // a few trials of the first one that could not be stored.
  std::ifstream requests(state_ / "requests");
  int asked = 0;
  for (std::string line; std::getline(requests, line);) ++asked;
  EXPECT_LT(asked, 20) << "the bench was driven on after the disk was full";
}

}  // namespace
}  // namespace perfwatch::daemon::testing
