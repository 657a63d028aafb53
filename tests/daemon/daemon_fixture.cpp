#include "tests/daemon/daemon_fixture.h"

#include <cstdio>

namespace perfwatch::daemon::testing {

using nlohmann::json;

std::string noisy_fake_bench(double factor, double spread) {
  char awk[256];
  std::snprintf(awk, sizeof awk, "awk '{printf \"%%.6f\", %.6f * (1 + %.6f * $1 / 65536)}'", factor, spread);
  return std::string("FAKE_BENCH_SLOW=base:$(od -An -N2 -tu2 /dev/urandom | ") + awk + ") exec " + FAKE_BENCH_PATH;
}

DaemonTest::DaemonTest() : log_([this](std::string_view line) { log_lines_.emplace_back(line); }) {
  auto db = store::Database::open(state_ / "perfwatch.db");
  EXPECT_TRUE(db.has_value()) << db.error().to_string();
  db_ = std::make_unique<store::Database>(std::move(*db));
}

json DaemonTest::fake_manifest() {
  return {{"schema_version", 1},
          {"build", {{"command", "true"}}},
          {"paths", {"src/", "perfwatch.json"}},
          {"bench", {{"command", FAKE_BENCH_PATH}, {"timeout_s", 60}, {"idle_timeout_s", 20}, {"env", json::object()}}},
          {"variants",
           {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}, {"num_warps", 4}}}},
            {{"name", "wide"},
             {"params", {{"block_t", 64}, {"num_warps", 8}}},
             {"hypothesis", "64-token tiles and 8 warps halve the per-tile overhead"}}}},
          {"sweep", {{"batch", {1, 8}}}},
          {"trials", {{"min", 3}, {"max", 6}, {"target_rel_ci", 0.5}, {"budget_s", 30}}},
          {"runs", {{"per_commit", 3}, {"max_per_commit", 6}}}};
}

std::string DaemonTest::commit(const json& manifest, const std::string& message,
                               std::map<std::string, std::string> files) {
  files["perfwatch.json"] = manifest.dump(2);
  return repo_.commit(files, message);
}

WatchOptions DaemonTest::options(bool once) const {
  WatchOptions o;
  o.repo = repo_.path();
  o.branch = "main";
  o.state_dir = state_.path() / "work";
  o.once = once;
  o.interval_s = 0.05;
  return o;
}

std::unique_ptr<Watcher> DaemonTest::open_watcher(const WatchOptions& o) {
  kept_options_.push_back(std::make_unique<WatchOptions>(o));
  auto w = Watcher::open(*db_, *kept_options_.back(), log_);
  EXPECT_TRUE(w.has_value()) << w.error().to_string();
  return w ? std::move(*w) : nullptr;
}

void DaemonTest::watch_once(WatchOptions o) {
  o.once = true;
  auto w = open_watcher(o);
  ASSERT_TRUE(w);
  std::atomic<bool> stop{false};
  auto s = w->run(stop);
  ASSERT_TRUE(s.has_value()) << s.error().to_string() << "\n" << log_text();
}

store::CommitRecord DaemonTest::commit_record(const std::string& sha) {
  auto repos = store::RepoReader(*db_).repos();
  EXPECT_TRUE(repos && !repos->empty());
  auto c = store::RepoReader(*db_).find_commit(repos->front().id, sha);
  EXPECT_TRUE(c && *c) << "commit " << sha << " not recorded";
  return c && *c ? **c : store::CommitRecord{};
}

std::vector<store::RunRecord> DaemonTest::runs_of(const std::string& sha) {
  auto c = commit_record(sha);
  auto runs = store::RunReader(*db_).runs_of_commit(c.id);
  EXPECT_TRUE(runs.has_value());
  return runs ? *runs : std::vector<store::RunRecord>{};
}

std::vector<store::JobRecord> DaemonTest::jobs_of(const std::string& sha) {
  store::JobFilter f;
  f.commit_sha = sha;
  auto jobs = store::JobReader(*db_).jobs(f);
  EXPECT_TRUE(jobs.has_value());
  return jobs ? *jobs : std::vector<store::JobRecord>{};
}

std::vector<store::FlagView> DaemonTest::flags(std::optional<store::FlagKind> kind) {
  store::FlagFilter f;
  f.kind = kind;
  auto out = store::AnalysisReader(*db_).flags(f);
  EXPECT_TRUE(out.has_value());
  return out ? *out : std::vector<store::FlagView>{};
}

std::vector<store::ExperimentRecord> DaemonTest::experiments(const store::ExperimentFilter& filter) {
  auto out = store::ExperimentReader(*db_).search(filter);
  EXPECT_TRUE(out.has_value()) << out.error().to_string();
  return out ? *out : std::vector<store::ExperimentRecord>{};
}

bool DaemonTest::logged(const std::string& text) const {
  for (const auto& l : log_lines_) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string DaemonTest::log_text() const {
  std::string out;
  for (const auto& l : log_lines_) out += l + "\n";
  return out;
}

}  // namespace perfwatch::daemon::testing
