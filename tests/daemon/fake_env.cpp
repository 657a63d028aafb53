#include "tests/daemon/fake_env.h"

#include <cmath>
#include <cstdio>

#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon::testing {

FakeEnv::FakeEnv(runner::Manifest manifest, double noise, std::uint64_t seed)
    : manifest_(std::move(manifest)), noise_(noise), rng_(seed) {}

std::string FakeEnv::add_commit(judge::testing::TrueValue value, bool touches_paths, const std::string& subject) {
  char sha[41];
  // The counter first: logs and short shas show the first 10 characters.
  std::snprintf(sha, sizeof sha, "%010zx%030x", order_.size() + 1, 0xfa4e);
  FakeCommit c;
  c.info.sha = sha;
  c.info.parent_sha = order_.empty() ? "" : order_.back();
  c.info.author_name = "fake";
  c.info.committed_at = 1'790'000'000 + static_cast<std::int64_t>(order_.size()) * 60;
  c.info.subject = subject.empty() ? "commit " + std::to_string(order_.size() + 1) : subject;
  c.info.message = c.info.subject;
  const std::string parent_tree = order_.empty() ? "" : commits_.at(order_.back()).tree;
  c.tree = touches_paths || order_.empty() ? "tree-" + std::string(sha) : parent_tree;
  c.value = std::move(value);
  commits_[sha] = std::move(c);
  order_.push_back(sha);
  return sha;
}

int FakeEnv::bench_calls(const std::string& sha) const {
  auto it = calls_.find(sha);
  return it == calls_.end() ? 0 : it->second;
}

Result<std::string> FakeEnv::resolve(const std::string& rev) const {
  std::string r = rev;
  if (const auto hat = r.find("^{commit}"); hat != std::string::npos) r = r.substr(0, hat);
  if (r == "refs/heads/main" || r == "main" || r == "HEAD") {
    if (order_.empty()) return fail(not_found(rev, "no commits"));
    return order_.back();
  }
  if (!commits_.count(r)) return fail(not_found(rev, "no such commit in the fake history"));
  return r;
}

Result<bool> FakeEnv::is_ancestor(const std::string& ancestor, const std::string& descendant) const {
  for (std::string at = descendant; !at.empty(); at = commits_.at(at).info.parent_sha) {
    if (at == ancestor) return true;
    if (!commits_.count(at)) break;
  }
  return false;
}

Result<runner::CommitInfo> FakeEnv::commit_info(const std::string& sha) const {
  auto it = commits_.find(sha);
  if (it == commits_.end()) return fail(not_found(sha, "no such commit in the fake history"));
  return it->second.info;
}

Result<std::string> FakeEnv::paths_hash(const std::string& sha, const std::vector<std::string>&) const {
  auto it = commits_.find(sha);
  if (it == commits_.end()) return fail(not_found(sha, "no such commit in the fake history"));
  return it->second.tree;
}

Result<runner::Manifest> FakeEnv::manifest(const std::string&) const { return manifest_; }

Result<BenchOutcome> FakeEnv::bench(store::Database& db, const BenchOptions& options, BenchReporter&) {
  auto it = commits_.find(options.rev);
  if (it == commits_.end()) return fail(not_found(options.rev, "no such commit in the fake history"));
  auto repo = store::RepoReader(db).repos();
  if (!repo) return fail(repo.error());
  if (repo->empty()) return fail(Error{ErrorCode::kInternal, "fake bench", "no repo in the store"});
  auto commit = record_commit(db, repo->front().id, *this, options.rev, manifest_);
  if (!commit) return fail(commit.error());
  auto testbed = store::RunWriter(db).ensure_testbed({.name = "fake-cpu", .hostname = "fake"});
  if (!testbed) return fail(testbed.error());

  BenchOutcome out;
  out.repo = repo->front().id;
  out.commit = *commit;
  out.sha = options.rev;
  out.testbed = *testbed;
  const std::filesystem::path folder = options.worktree.value_or(options.state_dir / "worktree");
  if (options.skip_build) {
    auto held = folders_.find(folder);
    if (held == folders_.end() || held->second != options.rev) {
      return fail(Error{ErrorCode::kInternal, folder.string(),
                        "holds " + (held == folders_.end() ? std::string("nothing") : held->second) + ", not " +
                            options.rev + ": build it first"});
    }
  } else {
    // A worktree the Workbench recognises (it looks for .git) holding this commit's build.
    std::filesystem::create_directories(folder / ".git");
    folders_[folder] = options.rev;
    store::BuildRecord build;
    build.commit_id = *commit;
    build.command = manifest_.build.command;
    auto added = store::RunWriter(db).add_build(build);
    if (!added) return fail(added.error());
    out.build = *added;
    if (options.build_only) return out;
  }
  ++calls_[options.rev];  // a bench process

  std::vector<int> batches;
  for (const auto& p : manifest_.points) {
    if (options.only_points.empty() || options.only_points.count(p.key)) batches.push_back(p.axes.at("batch").get<int>());
  }
  std::vector<std::string> variants;
  for (const auto& v : manifest_.variants) {
    if (v.baseline) variants.insert(variants.begin(), v.name);
    else variants.push_back(v.name);
  }
  std::normal_distribution<double> z(0, 1);
  std::map<std::pair<std::string, int>, double> factor;
  for (const auto& v : variants)
    for (int b : batches) factor[{v, b}] = std::exp(noise_ * z(rng_));
  const auto& truth = it->second.value;
  const store::RunId run = judge::testing::write_run(
      db, *commit, *testbed, variants, judge::testing::ensure_points(db, batches),
      [&](const std::string& v, int b) { return truth(v, b) * factor.at({v, b}); }, options.kind);

  out.run = run;
  out.trials = static_cast<std::int64_t>(variants.size() * batches.size() * 5);
  out.wall_s = 0.01;
  return out;
}

}  // namespace perfwatch::daemon::testing
