// A trial is on disk when insert_trial returns: a process that dies right
// after (without closing the database) loses nothing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "store/repo_store.h"
#include "store/run_store.h"
#include "store_test_util.h"

namespace perfwatch::store {
namespace {

using testing::TempDbPath;

enum class Death { kExit, kAbort };

// Prepares a run, then a child process inserts one trial and dies at once.
void insert_then_die(Death death) {
  TempDbPath tmp;
  RunId run = 0;
  VariantId variant = 0;
  PointId point = 0;
  {
    PW_UNWRAP(db, Database::open(tmp.path()));
    RepoWriter repos(db);
    RunWriter runs(db);
    PW_UNWRAP(repo, repos.ensure_repo({.path = "/r", .name = "r"}));
    PW_UNWRAP(commit, repos.put_commit({.repo_id = repo, .sha = testing::sha_of(1)}));
    PW_UNWRAP(r, runs.start_run({.commit_id = commit}));
    PW_UNWRAP(v, runs.add_variant({.run_id = r, .name = "base"}));
    PW_UNWRAP(p, runs.ensure_point(testing::point_record(8)));
    run = r;
    variant = v;
    point = p;
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto db = Database::open(tmp.path());
    if (!db) _exit(10);
    if (!RunWriter(*db).insert_trial(testing::trial_record(run, variant, point, 1, 42.0))) _exit(11);
    // No destructor runs: the connection is never closed, the WAL never checkpointed.
    if (death == Death::kAbort) std::abort();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  if (death == Death::kAbort) {
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGABRT);
  } else {
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "the child could not insert";
  }
  PW_UNWRAP(db, Database::open_read_only(tmp.path()));
  PW_UNWRAP(trials, RunReader(db).trials(run));
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_DOUBLE_EQ(trials[0].metrics.at("time_us"), 42.0);
}

TEST(Durability, TrialSurvivesExitWithoutClose) { insert_then_die(Death::kExit); }
TEST(Durability, TrialSurvivesAbort) { insert_then_die(Death::kAbort); }

}  // namespace
}  // namespace perfwatch::store
