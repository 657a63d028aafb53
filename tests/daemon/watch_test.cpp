// The daemon against a real git repo and the fast fake bench: commits
// benchmarked in order and judged, docs-only commits inherited, each failure
// of a build or a bench recorded while the queue moves on, force-pushes and
// vanished commits, flags with their webhook, experiments of every kind.
#include <httplib.h>

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include <gmock/gmock.h>

#include "daemon/manual_experiment.h"
#include "daemon/noise.h"
#include "judge/commit_runs.h"
#include "store/history_store.h"
#include "store/outbox_store.h"
#include "tests/daemon/daemon_fixture.h"
#include "tests/daemon/hook_receiver.h"

namespace perfwatch::daemon::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

int ok_runs(const std::vector<store::RunRecord>& runs) {
  int n = 0;
  for (const auto& r : runs) n += r.status == store::RunStatus::kOk && r.kind == store::RunKind::kBench;
  return n;
}

TEST_F(DaemonTest, EveryNewCommitIsBenchmarkedInOrderJudgedAndLoggedOneLinePerEvent) {
  std::string a = commit(fake_manifest(), "first", {{"src/k.c", "1"}});
  std::string b = commit(fake_manifest(), "second", {{"src/k.c", "2"}});
  WatchOptions o = options();
  o.since = a;
  watch_once(o);

  EXPECT_EQ(ok_runs(runs_of(a)), 3);
  EXPECT_EQ(ok_runs(runs_of(b)), 3);
  for (const auto& sha : {a, b}) {
    auto jobs = jobs_of(sha);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, store::JobState::kDone) << jobs[0].message;
    EXPECT_EQ(jobs[0].run_ids.size(), 3u);
  }
  // b against a, cell by cell; the fake measures both the same.
  auto cmp = store::AnalysisReader(*db_).comparisons_of_commit(commit_record(b).id);
  ASSERT_TRUE(cmp.has_value());
  ASSERT_EQ(cmp->size(), 4u);  // 2 variants x 2 points
  for (const auto& c : *cmp) {
    EXPECT_EQ(c.against_commit_id, commit_record(a).id);
    EXPECT_EQ(c.verdict, store::ChangeVerdict::kWithinNoise);
    EXPECT_EQ(c.runs, 3);
  }
  auto pooled = store::AnalysisReader(*db_).commit_summaries(commit_record(b).id);
  ASSERT_TRUE(pooled.has_value());
  EXPECT_EQ(pooled->size(), 4u);
  EXPECT_TRUE(flags().empty());
  // One line per event, the commit and the step first.
  EXPECT_TRUE(logged("commit=" + b.substr(0, 10) + " step=build status=ok")) << log_text();
  EXPECT_TRUE(logged("commit=" + b.substr(0, 10) + " step=run status=ok")) << log_text();
  EXPECT_TRUE(logged("step=compare against=" + a.substr(0, 10))) << log_text();
  // Built once per commit: later runs of the job reuse the slot's build.
  EXPECT_EQ(store::RunReader(*db_).builds_of_commit(commit_record(b).id)->size(), 1u);

  // Watching again finds nothing new and runs nothing.
  const std::size_t runs_before = runs_of(a).size() + runs_of(b).size();
  watch_once(options());
  EXPECT_EQ(runs_of(a).size() + runs_of(b).size(), runs_before);
}

TEST_F(DaemonTest, ACommitTouchingNoneOfThePathsInheritsWithoutBuildOrRun) {
  std::string a = commit(fake_manifest(), "kernel", {{"src/k.c", "1"}});
  std::string docs = commit(fake_manifest(), "docs only", {{"README.md", "how to"}});
  WatchOptions o = options();
  o.since = a;
  watch_once(o);

  store::CommitRecord d = commit_record(docs);
  ASSERT_TRUE(d.inherited_from.has_value());
  EXPECT_EQ(*d.inherited_from, commit_record(a).id);
  EXPECT_TRUE(runs_of(docs).empty());
  EXPECT_TRUE(store::RunReader(*db_).builds_of_commit(d.id)->empty());
  auto jobs = jobs_of(docs);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].state, store::JobState::kDone);
  EXPECT_THAT(jobs[0].message, HasSubstr("inherits the results of " + a.substr(0, 10)));
  EXPECT_TRUE(logged("commit=" + docs.substr(0, 10) + " step=inherit status=ok")) << log_text();
}

TEST_F(DaemonTest, ASlowerCommitIsFlaggedAsARegressionAndPostedToTheWebhookOnce) {
  HookReceiver hook;
  std::string a = commit(fake_manifest(), "baseline", {{"src/k.c", "1"}});
  json slow = fake_manifest();
  slow["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.5";
  std::string b = commit(slow, "slower base", {{"src/k.c", "2"}});
  WatchOptions o = options();
  o.since = a;
  o.webhook_url = hook.url();
  watch_once(o);

  auto regressions = flags(store::FlagKind::kRegression);
  ASSERT_EQ(regressions.size(), 2u) << log_text();  // base at both points
  for (const auto& f : regressions) {
    EXPECT_EQ(f.sha, b);
    EXPECT_EQ(f.flag.variant, "base");
    EXPECT_NEAR(f.flag.magnitude_rel, 0.5, 0.01);
    ASSERT_TRUE(f.flag.comparison_id.has_value());
  }
  auto bodies = hook.bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0]["event"], "regression");
  EXPECT_EQ(bodies[0]["commit"]["sha"], b);
  EXPECT_EQ(bodies[0]["variant"], "base");
  EXPECT_THAT(bodies[0]["text"].get<std::string>(), HasSubstr("regression +50.0%"));
  EXPECT_TRUE(logged("step=webhook")) << log_text();

  // The wide variant, unchanged, is now faster than base: its A/B says so.
  store::ExperimentFilter f;
  f.commit_id = commit_record(b).id;
  f.source = store::ExperimentSource::kAuto;
  auto ex = experiments(f);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(ex[0].verdict, store::ExperimentVerdict::kAccepted);

  // Acknowledged with a reason; a later look does not post again.
  ASSERT_TRUE(store::AnalysisWriter(*db_).acknowledge_flag(regressions[0].flag.id, "expected: base got heavier", "test"));
  watch_once(o);
  EXPECT_EQ(hook.bodies().size(), 2u);
}

// A commit whose subject and author are Latin-1 bytes (not UTF-8): the
// daemon judges it, raises its flags and posts them, with U+FFFD where the
// bytes were -- serialising the webhook's message once threw and ended the
// daemon, and the job was retried until abandoned.
TEST_F(DaemonTest, ACommitThatIsNotUtf8IsJudgedAndPostedWithReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  HookReceiver hook;
  std::string a = commit(fake_manifest(), "baseline", {{"src/k.c", "1"}});
  json slow = fake_manifest();
  slow["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.5";
  std::string b = repo_.commit_raw({{"perfwatch.json", slow.dump(2)}, {"src/k.c", "2"}}, "Ren\xE9", "Caf\xE9 tiles");
  WatchOptions o = options();
  o.since = a;
  o.webhook_url = hook.url();
  watch_once(o);

  EXPECT_EQ(jobs_of(b)[0].state, store::JobState::kDone) << log_text();
  EXPECT_EQ(commit_record(b).subject, "Caf" + r + " tiles");
  EXPECT_EQ(commit_record(b).author, "Ren" + r);
  auto bodies = hook.bodies();
  ASSERT_EQ(bodies.size(), 2u) << log_text();
  EXPECT_EQ(bodies[0]["commit"]["sha"], b);
  EXPECT_THAT(bodies[0].dump(), HasSubstr("Caf" + r + " tiles"));
}

TEST_F(DaemonTest, AWebhookThatFailsIsLoggedAndNeverStopsTheDaemon) {
  std::string a = commit(fake_manifest(), "baseline", {{"src/k.c", "1"}});
  json slow = fake_manifest();
  slow["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.5";
  std::string b = commit(slow, "slower", {{"src/k.c", "2"}});
  HookReceiver broken(500);
  WatchOptions o = options();
  o.since = a;
  o.webhook_url = broken.url();
  watch_once(o);
  EXPECT_EQ(flags(store::FlagKind::kRegression).size(), 2u);
  EXPECT_EQ(broken.bodies().size(), 2u);
  EXPECT_TRUE(logged("step=webhook flag=")) << log_text();
  EXPECT_TRUE(logged("status=failed message=\"webhook " + broken.url() + ": POST answered 500\"")) << log_text();
  EXPECT_EQ(jobs_of(b)[0].state, store::JobState::kDone);
  // Not lost: both wait in the outbox for their next attempt.
  EXPECT_EQ((*store::OutboxReader(*db_).counts())[store::OutboxState::kPending], 2);

  // Nothing listening at all: the daemon goes on just the same.
  EXPECT_FALSE(Webhook::make("http://127.0.0.1:1/hook")->post(json::object()).has_value());
  EXPECT_FALSE(Webhook::make("ftp://example.com/hook").has_value());
}

// Each failure of issue 2's list: recorded, and the next commit is judged
// against the last one that measured.
struct Failure {
  const char* name;
  std::function<void(json&)> break_it;
  store::RunStatus status;
  const char* message;
  std::int64_t trials_kept;
};

void PrintTo(const Failure& failure, std::ostream* os) { *os << failure.name; }

class QueueFailureTest : public DaemonTest, public ::testing::WithParamInterface<Failure> {};

TEST_P(QueueFailureTest, IsRecordedAndTheQueueMovesOn) {
  const Failure& failure = GetParam();
  std::string a = commit(fake_manifest(), "good", {{"src/k.c", "1"}});
  json broken = fake_manifest();
  failure.break_it(broken);
  std::string b = commit(broken, std::string("broken: ") + failure.name, {{"src/k.c", "2"}});
  std::string c = commit(fake_manifest(), "good again", {{"src/k.c", "3"}});
  WatchOptions o = options();
  o.since = a;
  watch_once(o);

  auto jobs = jobs_of(b);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].state, store::JobState::kFailed);
  EXPECT_THAT(jobs[0].message, HasSubstr(failure.message));
  auto runs = runs_of(b);
  ASSERT_EQ(runs.size(), 1u) << "a failing commit is not run again and again";
  EXPECT_EQ(runs[0].status, failure.status);
  EXPECT_EQ(runs[0].trial_count, failure.trials_kept);

  EXPECT_EQ(jobs_of(c)[0].state, store::JobState::kDone) << jobs_of(c)[0].message;
  auto cmp = store::AnalysisReader(*db_).comparisons_of_commit(commit_record(c).id);
  ASSERT_TRUE(cmp && !cmp->empty());
  EXPECT_EQ(cmp->front().against_commit_id, commit_record(a).id);
}

INSTANTIATE_TEST_SUITE_P(
    EachFailure, QueueFailureTest,
    ::testing::Values(
        Failure{"build", [](json& m) { m["build"]["command"] = "echo 'error: no such tile' >&2; exit 3"; },
                store::RunStatus::kBuildFailed, "build failed", 0},
        Failure{"crash", [](json& m) { m["bench"]["env"]["FAKE_BENCH"] = "crash_after=5"; }, store::RunStatus::kCrashed,
                "crashed", 5},
        Failure{"hang",
                [](json& m) {
                  m["bench"]["env"]["FAKE_BENCH"] = "hang_after=4";
                  m["bench"]["idle_timeout_s"] = 1;
                },
                store::RunStatus::kTimeout, "timeout", 4},
        Failure{"garbage", [](json& m) { m["bench"]["env"]["FAKE_BENCH"] = "garbage_after=2"; },
                store::RunStatus::kProtocolError, "protocol_error", 2}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(DaemonTest, AForcePushDropsQueuedCommitsThatLeftTheBranchAndQueuesTheNewOnes) {
  std::string a = commit(fake_manifest(), "a", {{"src/k.c", "1"}});
  auto w = open_watcher(options());
  ASSERT_TRUE(w);
  ASSERT_EQ(*w->poll(), 1);  // the head only, on the first look
  std::string b = commit(fake_manifest(), "b", {{"src/k.c", "2"}});
  std::string c = commit(fake_manifest(), "c", {{"src/k.c", "3"}});
  ASSERT_EQ(*w->poll(), 2);
  repo_.git("reset -q --hard " + a);
  std::string d = commit(fake_manifest(), "d, rewritten history", {{"src/k.c", "4"}});
  ASSERT_EQ(*w->poll(), 1);
  EXPECT_TRUE(logged("event=force_push")) << log_text();
  for (const auto& gone : {b, c}) {
    auto jobs = jobs_of(gone);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].state, store::JobState::kSkipped);
    EXPECT_THAT(jobs[0].message, HasSubstr("force-push"));
  }
  while (*w->work_one()) {
  }
  EXPECT_EQ(jobs_of(d)[0].state, store::JobState::kDone);
  auto cmp = store::AnalysisReader(*db_).comparisons_of_commit(commit_record(d).id);
  ASSERT_TRUE(cmp && !cmp->empty());
  EXPECT_EQ(cmp->front().against_commit_id, commit_record(a).id);
  for (const auto& gone : {b, c}) EXPECT_TRUE(jobs_of(gone)[0].run_ids.empty());
}

TEST_F(DaemonTest, APinnedBaselineIsReRunBesideEachCommitAndComparedWithIt) {
  std::string a = commit(fake_manifest(), "release", {{"src/k.c", "1"}});
  repo_.git("tag v1");
  json m = fake_manifest();
  m["runs"]["pinned_baseline"] = "v1";
  m["runs"]["interleave_baseline"] = true;
  std::string b = commit(m, "pin the release", {{"src/k.c", "2"}});
  m["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.5";
  std::string c = commit(m, "slower than the release", {{"src/k.c", "3"}});
  WatchOptions o = options();
  o.since = b;
  watch_once(o);

  int reruns = 0;
  for (const auto& r : runs_of(a)) reruns += r.kind == store::RunKind::kBaselineRerun && r.status == store::RunStatus::kOk;
  // A B A B: one before each of b's three runs and c's six (c's regression
  // was measured again, to 6 runs, before it was flagged).
  EXPECT_EQ(reruns, 9);
  auto cmp = store::AnalysisReader(*db_).comparisons_of_commit(commit_record(c).id);
  ASSERT_TRUE(cmp.has_value());
  int pinned = 0, worse = 0;
  for (const auto& x : *cmp) {
    if (x.basis != store::ComparisonBasis::kPinned) continue;
    ++pinned;
    EXPECT_EQ(x.against_commit_id, commit_record(a).id);
    EXPECT_EQ(x.against_runs, 6);  // the re-runs made beside c
    worse += x.verdict == store::ChangeVerdict::kRegression;
  }
  EXPECT_EQ(pinned, 4);
  EXPECT_EQ(worse, 2);
  EXPECT_TRUE(logged("basis=pinned")) << log_text();
}

// The pin is a reference to read against (how far from the release), not
// a look that flags: judged net of the flags since the pin, a missed or
// misjudged step biased every later judgement (judge/README.md). Two +4%
// steps, each inside the default band, leave the release behind by 8%: the
// pinned comparisons say so; no flag is raised against the pin.
TEST_F(DaemonTest, APinnedBaselineIsComparedWithEveryCommitButRaisesNoFlag) {
  std::string a = commit(fake_manifest(), "release", {{"src/k.c", "1"}});
  repo_.git("tag v1");
  json m = fake_manifest();
  m["runs"]["pinned_baseline"] = "v1";
  std::string b = commit(m, "pin the release", {{"src/k.c", "2"}});
  m["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.04";
  std::string c = commit(m, "a little slower", {{"src/k.c", "3"}});
  m["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.0816";
  std::string d = commit(m, "a little slower again", {{"src/k.c", "4"}});
  std::string e = commit(m, "as slow, touched", {{"src/k.c", "5"}});
  WatchOptions o = options();
  o.since = b;
  watch_once(o);

  for (const auto& f : flags()) EXPECT_NE(f.flag.detail.value("basis", ""), "pinned") << f.flag.detail.dump();
  for (const auto& sha : {d, e}) {
    auto cmp = store::AnalysisReader(*db_).comparisons_of_commit(commit_record(sha).id);
    ASSERT_TRUE(cmp.has_value());
    int slower = 0;
    for (const auto& x : *cmp) {
      if (x.basis != store::ComparisonBasis::kPinned) continue;
      EXPECT_EQ(x.against_commit_id, commit_record(a).id);
      if (x.variant == "base") {
        EXPECT_NEAR(x.ratio.value_or(0), 1.0816, 0.01);
        slower += x.verdict == store::ChangeVerdict::kRegression;
      }
    }
    EXPECT_EQ(slower, 2) << sha << "\n" << log_text();  // both points, 8% past the release
  }
  EXPECT_TRUE(logged("basis=pinned")) << log_text();
}

TEST_F(DaemonTest, ACommitThatNoLongerExistsIsSkippedWithTheReason) {
  std::string a = commit(fake_manifest(), "a", {{"src/k.c", "1"}});
  repo_.git("checkout -q -b side");
  std::string gone = commit(fake_manifest(), "on a branch about to vanish", {{"src/k.c", "2"}});
  repo_.git("checkout -q main");
  auto w = open_watcher(options());
  ASSERT_TRUE(w);
  store::JobRequest r;
  r.repo_id = w->repo();
  r.commit_sha = gone;
  ASSERT_TRUE(store::JobQueue(*db_).enqueue(r).has_value());
  repo_.git("branch -q -D side");
  repo_.git("reflog expire --expire=now --all");
  repo_.git("gc -q --prune=now");
  ASSERT_TRUE(*w->work_one());
  auto jobs = jobs_of(gone);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].state, store::JobState::kSkipped);
  EXPECT_THAT(jobs[0].message, HasSubstr("no longer exists"));
  EXPECT_TRUE(logged("step=check status=vanished")) << log_text();
}

TEST_F(DaemonTest, EveryNonBaselineVariantGetsAPairedExperimentAndSlowerIsRejected) {
  json m = fake_manifest();
  m["bench"]["env"]["FAKE_BENCH_SLOW"] = "wide:1.25";
  std::string a = commit(m, "wide tiles", {{"src/k.c", "1"}});
  watch_once(options());
  store::ExperimentFilter f;
  f.verdict = store::ExperimentVerdict::kRejected;
  f.params = {{"num_warps", "8"}};
  auto ex = experiments(f);
  ASSERT_EQ(ex.size(), 1u) << log_text();
  auto detail = store::ExperimentReader(*db_).experiment(ex[0].id);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->experiment.source, store::ExperimentSource::kAuto);
  EXPECT_EQ(detail->experiment.hypothesis, "64-token tiles and 8 warps halve the per-tile overhead");
  ASSERT_EQ(detail->evidence.size(), 2u);
  for (const auto& row : detail->evidence) {
    EXPECT_EQ(row.evidence.candidate, "wide");
    EXPECT_EQ(row.evidence.verdict, store::ChangeVerdict::kRegression);
    EXPECT_NEAR(*row.evidence.delta_rel, 0.25, 0.01);
    EXPECT_EQ(row.evidence.runs, 3);
    ASSERT_TRUE(row.evidence.band_rel.has_value());
  }
}

TEST_F(DaemonTest, PerfTrailersMakeAnExperimentOfTheCommitAgainstItsPredecessorInItsGroup) {
  std::string a = commit(fake_manifest(), "baseline", {{"src/k.c", "1"}});
  json slow = fake_manifest();
  slow["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.2";
  std::string b = commit(slow,
                         "deeper gather pipeline\n\nPerf-Hypothesis: three stages hide the gather latency\n"
                         "Perf-Experiment: gather-depth",
                         {{"src/k.c", "2"}});
  WatchOptions o = options();
  o.since = a;
  watch_once(o);
  store::ExperimentFilter f;
  f.source = store::ExperimentSource::kTrailer;
  auto ex = experiments(f);
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(ex[0].hypothesis, "three stages hide the gather latency");
  EXPECT_EQ(ex[0].group_key, "gather-depth");
  EXPECT_EQ(ex[0].verdict, store::ExperimentVerdict::kRejected);
  EXPECT_EQ(ex[0].baseline["commit"], a);
  EXPECT_EQ(ex[0].candidates[0]["commit"], b);
  store::ExperimentFilter by_text;
  by_text.text = "gather latency";
  EXPECT_EQ(experiments(by_text).size(), 1u);
}

TEST_F(DaemonTest, ManualExperimentsTakeTheirEvidenceFromStoredRunsOrWaitPending) {
  std::string a = commit(fake_manifest(), "baseline", {{"src/k.c", "1"}});
  json fast = fake_manifest();
  fast["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:0.8";
  std::string b = commit(fast, "faster", {{"src/k.c", "2"}});
  WatchOptions o = options();
  o.since = a;
  watch_once(o);
  auto w = open_watcher(o);
  ManualExperiment req;
  req.hypothesis = "the new split heuristic is faster";
  req.baseline = a;
  req.candidates = {b};
  auto id = record_manual_experiment(w->context(), req);
  ASSERT_TRUE(id.has_value()) << id.error().to_string();
  auto detail = store::ExperimentReader(*db_).experiment(*id);
  ASSERT_TRUE(detail.has_value());
  EXPECT_EQ(detail->experiment.source, store::ExperimentSource::kManual);
  EXPECT_EQ(detail->experiment.verdict, store::ExperimentVerdict::kAccepted);
  EXPECT_EQ(detail->evidence.size(), 4u);

  std::string unmeasured = commit(fake_manifest(), "not benchmarked yet", {{"src/k.c", "3"}});
  req.candidates = {unmeasured};
  auto pending = record_manual_experiment(w->context(), req);
  ASSERT_TRUE(pending.has_value()) << pending.error().to_string();
  EXPECT_EQ(store::ExperimentReader(*db_).experiment(*pending)->experiment.verdict, store::ExperimentVerdict::kPending);
  ASSERT_TRUE(store::ExperimentWriter(*db_).conclude(*pending, store::ExperimentVerdict::kNoEffect, "tried by hand: no change"));

  req.baseline = "variant:base";
  req.candidates = {a};
  EXPECT_FALSE(record_manual_experiment(w->context(), req).has_value());  // a variant against a commit
}

TEST_F(DaemonTest, AAnoiseRunsCalibrateTheBandsPerVariantAndPoint) {
  json m = fake_manifest();
  m["bench"]["command"] = noisy_fake_bench(1.0, 0.02);
  commit(m, "baseline", {{"src/k.c", "1"}});
  auto w = open_watcher(options());
  auto r = calibrate_noise(w->context(), "HEAD", 10);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->ok_runs, 10);
  ASSERT_EQ(r->bands.size(), 4u);
  for (const auto& b : r->bands) {
    EXPECT_TRUE(b.calibrated);
    EXPECT_EQ(b.source, store::NoiseSource::kAa);
    EXPECT_EQ(b.k_runs, 10);
    EXPECT_THAT(b.method, HasSubstr("10 A/A runs"));
    if (b.variant == "base") {
      // Uniform +-1% per process: sigma ~0.58%, band for 3 vs 3 runs ~1.1%.
      EXPECT_GT(b.band_rel, 0.002);
      EXPECT_LT(b.band_rel, 0.03);
    }
  }
  for (const auto& run : runs_of(r->sha)) EXPECT_EQ(run.kind, store::RunKind::kNoise);
}

TEST_F(DaemonTest, AStepNoSingleComparisonCatchesIsFoundAsAChangePointAndConfirmed) {
  // One run per commit, grown to at most 4: inside the uncalibrated +-5%
  // band a +3% step is never flagged by its comparison (within noise once
  // the runs agree), so only the history can see it.
  json m = fake_manifest();
  m["runs"] = {{"per_commit", 1}, {"max_per_commit", 4}};
  std::vector<std::string> shas;
  // Eight commits a side: the permutation test on a history of exact values
  // needs enough distinct orders to reach p <= 0.01.
  for (int i = 0; i < 16; ++i) {
    json mi = m;
    if (i >= 8) mi["bench"]["env"]["FAKE_BENCH_SLOW"] = "base:1.03";
    shas.push_back(commit(mi, "commit " + std::to_string(i), {{"src/k.c", std::to_string(i)}}));
  }
  WatchOptions o = options();
  o.since = shas[0];
  watch_once(o);

  EXPECT_TRUE(logged("step=changepoint")) << log_text();
  if (std::getenv("PW_SHOW_LOG")) std::cerr << log_text();
  auto cps = flags(store::FlagKind::kChangepoint);
  ASSERT_FALSE(cps.empty()) << log_text();
  EXPECT_EQ(cps[0].sha, shas[8]);
  EXPECT_EQ(cps[0].flag.variant, "base");
  EXPECT_NEAR(cps[0].flag.magnitude_rel, 0.03, 0.002);
  EXPECT_TRUE(cps[0].flag.detail.contains("change_point"));
  // One flag per cell: the confirmation did not add a second one to a cell
  // already flagged.
  std::map<std::pair<std::string, store::PointId>, int> per_cell;
  for (const auto& f : flags()) ++per_cell[{f.sha + f.flag.variant, f.flag.point_id}];
  for (const auto& [cell, n] : per_cell) EXPECT_EQ(n, 1) << cell.first;
  // The confirmation grew the step's commit and its predecessor (A B A B)
  // up to the budget, runs.max_per_commit = 4 bench processes a commit,
  // confirmations included; no commit got more.
  for (int i : {7, 8}) {
    const auto runs = runs_of(shas[i]);
    EXPECT_EQ(ok_runs(runs), 4) << i;
    ASSERT_TRUE(runs[0].testbed_id.has_value());
    auto values = judge::commit_runs(*db_, commit_record(shas[i]).id, *runs[0].testbed_id);
    ASSERT_TRUE(values.has_value());
    for (const auto& [cell, medians] : values->values()) EXPECT_LE(medians.size(), 4u) << i << " " << cell.variant;
  }
  for (const auto& sha : shas) EXPECT_LE(static_cast<int>(runs_of(sha).size()), 4) << sha;
}

}  // namespace
}  // namespace perfwatch::daemon::testing
