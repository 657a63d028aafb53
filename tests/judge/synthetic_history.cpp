#include "tests/judge/synthetic_history.h"

#include <cmath>
#include <cstdio>

#include "store/analysis_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::judge::testing {

using nlohmann::json;

namespace {

template <typename T>
T unwrap(Result<T> r) {
  if (!r) {
    ADD_FAILURE() << r.error().to_string();
    return T{};
  }
  return std::move(*r);
}

std::string sha_of(std::size_t i) {
  char buffer[41];
  std::snprintf(buffer, sizeof buffer, "%010zx%030x", i, 0xfeed);  // short shas differ
  return buffer;
}

}  // namespace

std::map<int, store::PointId> ensure_points(store::Database& db, const std::vector<int>& batches) {
  std::map<int, store::PointId> out;
  for (int b : batches) {
    store::PointRecord p;
    p.axes = {{"batch", b}};
    p.key = runner::point_key(p.axes);
    p.label = "C" + std::to_string(b);
    out[b] = unwrap(store::RunWriter(db).ensure_point(p));
  }
  return out;
}

store::RunId write_run(store::Database& db, store::CommitId commit, store::TestbedId testbed,
                       const std::vector<std::string>& variants, const std::map<int, store::PointId>& points,
                       const TrueValue& value, store::RunKind kind) {
  store::RunWriter runs(db);
  store::RunRecord r;
  r.commit_id = commit;
  r.testbed_id = testbed;
  r.kind = kind;
  r.purpose = "synthetic";
  const store::RunId run = unwrap(runs.start_run(r));
  std::vector<store::SummaryRecord> summaries;
  for (const auto& v : variants) {
    const store::VariantId variant =
        unwrap(runs.add_variant({.run_id = run, .name = v, .is_baseline = v == variants.front()}));
    for (const auto& [batch, point] : points) {
      const double median = value(v, batch);
      store::SummaryRecord s;
      s.run_id = run;
      s.variant_id = variant;
      s.point_id = point;
      s.metric = "time_us";
      s.n = 5;
      s.median = median;
      s.ci_low = median * 0.99;
      s.ci_high = median * 1.01;
      s.stop_reason = "ci_reached";
      summaries.push_back(s);
    }
  }
  EXPECT_TRUE(store::AnalysisWriter(db).put_summaries(summaries).has_value());
  EXPECT_TRUE(runs.finish_run(run, {.status = store::RunStatus::kOk, .wall_s = 1.0}).has_value());
  return run;
}

SyntheticHistory::SyntheticHistory() {
  auto db = store::Database::open(dir_ / "perfwatch.db");
  EXPECT_TRUE(db.has_value()) << db.error().to_string();
  db_ = std::make_unique<store::Database>(std::move(*db));
  repo_ = unwrap(store::RepoWriter(*db_).ensure_repo({.path = dir_.path().string(), .name = "synthetic"}));
  testbed_ = unwrap(store::RunWriter(*db_).ensure_testbed({.name = "cpu-test", .hostname = "test"}));
  points_ = ensure_points(*db_, batches_);
}

runner::Manifest SyntheticHistory::manifest(int max_per_commit, const std::string& pinned_baseline) {
  json runs = {{"per_commit", 3}, {"max_per_commit", max_per_commit}};
  if (!pinned_baseline.empty()) runs["pinned_baseline"] = pinned_baseline;
  json doc = {{"schema_version", 1},
              {"build", {{"command", "true"}}},
              {"paths", {"src/"}},
              {"bench", {{"command", "bench"}}},
              {"variants",
               {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}}}},
                {{"name", "wide"}, {"params", {{"block_t", 64}}}}}},
              {"sweep", {{"batch", {1, 8}}}},
              {"runs", runs}};
  auto m = runner::parse_manifest(doc, "synthetic manifest");
  EXPECT_TRUE(m.has_value()) << m.error().to_string();
  return m ? *m : runner::Manifest{};
}

store::CommitRecord SyntheticHistory::add_commit(const std::string& subject) {
  store::CommitRecord c;
  c.repo_id = repo_;
  c.sha = sha_of(commits_.size() + 1);
  c.parent_sha = commits_.empty() ? "" : commits_.back().sha;
  c.author = "judge test";
  c.committed_at = 1'790'000'000 + static_cast<store::UnixSeconds>(commits_.size()) * 60;
  c.subject = subject.empty() ? "commit " + std::to_string(commits_.size() + 1) : subject;
  c.message = c.subject;
  c.paths_hash = "tree" + std::to_string(commits_.size() + 1);
  c.id = unwrap(store::RepoWriter(*db_).put_commit(c));
  commits_.push_back(c);
  return c;
}

store::RunId SyntheticHistory::add_run(const store::CommitRecord& commit, const TrueValue& value,
                                       store::RunKind kind) {
  return write_run(*db_, commit.id, testbed_, variants_, points_, value, kind);
}

std::vector<store::RunId> SyntheticHistory::add_runs(const store::CommitRecord& commit, int n, const TrueValue& value,
                                                     double noise) {
  std::vector<store::RunId> out;
  std::normal_distribution<double> z(0, 1);
  for (int i = 0; i < n; ++i) {
    std::map<std::pair<std::string, int>, double> factor;
    for (const auto& v : variants_)
      for (int b : batches_) factor[{v, b}] = std::exp(noise * z(rng_));
    out.push_back(add_run(commit, [&](const std::string& v, int b) { return value(v, b) * factor.at({v, b}); }));
  }
  return out;
}

store::RunId SyntheticHistory::add_failed_run(const store::CommitRecord& commit) {
  store::RunWriter runs(*db_);
  store::RunRecord r;
  r.commit_id = commit.id;
  r.testbed_id = testbed_;
  r.purpose = "synthetic failure";
  const store::RunId run = unwrap(runs.start_run(r));
  EXPECT_TRUE(runs.finish_run(run, {.status = store::RunStatus::kCrashed, .message = "synthetic crash"}).has_value());
  return run;
}

std::vector<store::FlagRecord> SyntheticHistory::flags_of(const store::CommitRecord& commit) {
  store::FlagFilter f;
  f.commit_id = commit.id;
  std::vector<store::FlagRecord> out;
  for (auto& v : unwrap(store::AnalysisReader(*db_).flags(f))) out.push_back(v.flag);
  return out;
}

}  // namespace perfwatch::judge::testing
