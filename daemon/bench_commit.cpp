#include "daemon/bench_commit.h"

#include <chrono>
#include <cstdlib>
#include <ctime>

#include "daemon/leftovers.h"
#include "daemon/storing_sink.h"
#include "runner/build.h"
#include "runner/worktree.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

namespace fs = std::filesystem;
using nlohmann::json;

store::RunStatus to_store_status(runner::RunStatus status) {
  switch (status) {
    case runner::RunStatus::kOk: return store::RunStatus::kOk;
    case runner::RunStatus::kCrashed: return store::RunStatus::kCrashed;
    case runner::RunStatus::kTimedOut: return store::RunStatus::kTimeout;
    case runner::RunStatus::kProtocolError: return store::RunStatus::kProtocolError;
    case runner::RunStatus::kStopped: return store::RunStatus::kCutOff;
    case runner::RunStatus::kStoreFailed: return store::RunStatus::kStoreFailed;
    case runner::RunStatus::kFailed:
    case runner::RunStatus::kFailedToStart: return store::RunStatus::kFailed;
  }
  return store::RunStatus::kFailed;
}

fs::path worktree_dir(const fs::path& state_dir, const fs::path& repo) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(repo, ec);
  std::size_t h = std::hash<std::string>{}(canonical.string());
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016zx", h);
  return state_dir / "worktrees" / (canonical.filename().string() + "-" + std::string(suffix).substr(0, 8));
}

Result<runner::Manifest> manifest_for(const runner::Git& git, const std::string& sha,
                                      const std::optional<fs::path>& manifest_path) {
  if (manifest_path) return runner::load_manifest(*manifest_path);
  auto text = git.show_file(sha, "perfwatch.json");
  std::string where = "perfwatch.json at " + sha.substr(0, 12);
  if (!text) {
    return fail(not_found(where, "the commit has no perfwatch.json at its root; add one or pass --manifest FILE"));
  }
  return runner::parse_manifest_text(*text, where);
}

Result<store::RepoId> record_repo(store::Database& db, const fs::path& repo) {
  std::error_code ec;
  fs::path canonical = fs::canonical(repo, ec);
  if (ec) return fail(not_found(repo.string(), ec.message()));
  store::RepoRecord r;
  r.path = canonical.string();
  r.name = canonical.filename().string();
  return store::RepoWriter(db).ensure_repo(r);
}

Result<store::CommitId> record_commit(store::Database& db, store::RepoId repo, const runner::Git& git,
                                      const std::string& sha, const runner::Manifest& manifest) {
  auto info = git.commit_info(sha);
  if (!info) return fail(info.error());
  auto hash = git.paths_hash(sha, manifest.paths);
  if (!hash) return fail(hash.error());
  return record_commit(db, repo, *info, *hash);
}

Result<store::CommitId> record_commit(store::Database& db, store::RepoId repo, const runner::CommitInfo& info_,
                                      const std::string& paths_hash) {
  const runner::CommitInfo* info = &info_;
  const std::string* hash = &paths_hash;
  store::CommitRecord c;
  c.repo_id = repo;
  c.sha = info->sha;
  c.parent_sha = info->parent_sha;
  c.author = info->author_name;
  c.email = info->author_email;
  c.committed_at = info->committed_at;
  c.subject = info->subject;
  c.message = info->message;
  c.paths_hash = *hash;
  if (auto it = info->trailers.find("Perf-Hypothesis"); it != info->trailers.end()) c.perf_hypothesis = it->second;
  if (auto it = info->trailers.find("Perf-Experiment"); it != info->trailers.end()) c.perf_experiment = it->second;
  return store::RepoWriter(db).put_commit(c);
}

namespace {

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::gmtime(&now));
  return buf;
}

// The values of the manifest's record_env as the bench will see them.
json recorded_env(const runner::Manifest& m) {
  json env = json::object();
  for (const auto& name : m.bench.record_env) {
    if (auto it = m.bench.env.find(name); it != m.bench.env.end()) {
      env[name] = it->second;
    } else if (const char* v = std::getenv(name.c_str())) {
      env[name] = v;
    } else {
      env[name] = nullptr;
    }
  }
  return env;
}

// "-gpu-3", "-hopper-2": a slot's label as a file name part.
std::string slot_suffix(const Slot* slot) {
  if (!slot) return "";
  std::string label = slot->label();
  label = label.substr(0, label.find(" ("));
  for (char& c : label)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_') c = '-';
  return "-" + label;
}

}  // namespace

Result<BenchOutcome> bench_commit(store::Database& db, const BenchOptions& options_in, BenchReporter& reporter) {
  // Absolute paths: git runs with -C in the repo, and the bench in the worktree.
  BenchOptions options = options_in;
  std::error_code abs_ec;
  options.repo = fs::absolute(options.repo, abs_ec);
  options.state_dir = fs::absolute(options.state_dir, abs_ec);
  runner::Git git(options.repo);
  if (auto ok = git.check(); !ok) return fail(ok.error());
  auto sha = git.resolve(options.rev);
  if (!sha) return fail(invalid_argument("--commit", sha.error().message));

  BenchOutcome out;
  out.sha = *sha;
  std::string short_sha = sha->substr(0, 10);
  auto manifest = manifest_for(git, *sha, options.manifest_path);
  if (!manifest) return fail(manifest.error());
  std::vector<runner::PointSpec> points;  // empty: all of them
  for (const auto& point : manifest->points) {
    if (options.only_points.count(point.key)) points.push_back(point);
  }
  // Points this commit's manifest lacks are not measured; asking only for such points is an error.
  if (!options.only_points.empty() && points.empty()) {
    return fail(invalid_argument("points", "none of the points asked for is in the manifest of " + short_sha));
  }

  auto repo = record_repo(db, options.repo);
  if (!repo) return fail(repo.error());
  out.repo = *repo;
  auto commit = record_commit(db, *repo, git, *sha, *manifest);
  if (!commit) return fail(commit.error());
  out.commit = *commit;

  const fs::path tree_dir = options.worktree ? *options.worktree : worktree_dir(options.state_dir, options.repo);
  reporter.stage("checking out " + short_sha + " in " + tree_dir.string());
  // A run of a build already there shares the folder with the other runs of
  // it (a commit's runs on several GPUs at once); a build has it to itself.
  auto tree = options.skip_build ? runner::Worktree::use(tree_dir, *sha) : runner::Worktree::checkout(git, tree_dir, *sha);
  if (!tree) return fail(tree.error());

  store::RunWriter writer(db);
  std::string stamp = timestamp();
  fs::path logs = options.state_dir / "logs";
  std::error_code ec;
  fs::create_directories(logs, ec);
  std::string toolchain;

  if (!options.skip_build) {
    fs::path build_log = logs / (short_sha + "-" + stamp + "-build.log");
    reporter.stage("building " + short_sha + ": " + manifest->build.command + " (log: " + build_log.string() + ")");
    auto started = std::chrono::system_clock::now();
    const std::string build_name = "perfwatch-build-" + short_sha + "-" + stamp;
    const Placement placed = options.slot ? options.slot->place(build_name, true) : Placement{};
    runner::BuildOutcome build =
        runner::run_build(*manifest, tree->root(), build_log,
                          recording_watch(db, "build of " + short_sha, std::nullopt, options.stop), placed.launcher);
    toolchain = build.toolchain;
    const bool stopped = build.process.outcome == runner::Outcome::kStopped;
    store::BuildRecord b;
    b.commit_id = *commit;
    b.status = build.ok() ? store::BuildStatus::kOk
               : build.process.outcome == runner::Outcome::kTimedOut ? store::BuildStatus::kTimeout
                                                                      : store::BuildStatus::kFailed;
    b.command = build.command;
    if (build.process.outcome == runner::Outcome::kExited) b.exit_code = build.process.exit_code;
    b.duration_s = build.process.wall_s;
    b.log_tail = build.process.tail;
    b.log_path = build_log.string();
    b.toolchain = build.toolchain;
    b.started_at = std::chrono::duration_cast<std::chrono::seconds>(started.time_since_epoch()).count();
    b.finished_at = b.started_at + static_cast<std::int64_t>(build.process.wall_s);
    // A stopped build is no build: not recorded (the run below says what happened).
    std::optional<store::BuildId> build_id;
    if (!stopped) {
      auto added = writer.add_build(b);
      if (!added) return fail(added.error());
      build_id = *added;
      out.build = *added;
    }
    if (!build.ok()) {
      // A failed build is a run that never started its bench: stored, with the log's tail.
      store::RunRecord run;
      run.commit_id = *commit;
      run.build_id = build_id;
      run.job_id = options.job;
      run.kind = options.kind;
      run.purpose = options.purpose;
      run.log_path = build_log.string();
      run.manifest = manifest->source;
      auto run_id = writer.start_run(run);
      if (!run_id) return fail(run_id.error());
      out.run = *run_id;
      // A stopped build is no verdict on the commit: the run is cut off, the build redone next time.
      out.status = stopped ? store::RunStatus::kCutOff : store::RunStatus::kBuildFailed;
      out.message = "the build " + build.process.describe() + " (log: " + build_log.string() + ")";
      // Nor is a build the executor lost (a Slurm job preempted, its node gone).
      if (!stopped && options.slot) {
        if (auto lost = options.slot->ended(build_name).lost) {
          out.status = store::RunStatus::kLost;
          out.message = *lost + "; " + out.message;
        }
      }
      out.wall_s = build.process.wall_s;
      store::RunOutcome o;
      o.status = out.status;
      o.exit_code = b.exit_code;
      o.message = out.message;
      o.stderr_tail = build.process.tail;
      o.wall_s = build.process.wall_s;
      if (auto s = writer.finish_run(*run_id, o); !s) return fail(s.error());
      return out;
    }
    reporter.stage("built " + short_sha + " in " + std::to_string(static_cast<int>(build.process.wall_s + 0.5)) + " s");
    // The runs of this build follow on several slots at once (job_runs.h).
    if (options.build_only) return out;
  }

  // Runs of one commit on several slots at once: the slot keeps their logs apart.
  fs::path bench_log = logs / (short_sha + "-" + stamp + slot_suffix(options.slot) + "-run-stderr.log");
  store::RunRecord run;
  run.commit_id = *commit;
  run.build_id = out.build;
  run.job_id = options.job;
  run.kind = options.kind;
  run.purpose = options.purpose;
  run.log_path = bench_log.string();
  run.manifest = manifest->source;
  if (options.seed) run.seed = static_cast<std::int64_t>(options.seed);
  auto run_id = writer.start_run(run);
  if (!run_id) return fail(run_id.error());
  out.run = *run_id;
  // Who runs it: if this process dies, the next perfwatch cuts the run off.
  if (auto s = store::ProcessStore(db).set_run_owner(*run_id, this_process()); !s) return fail(s.error());
  // Where: named after the run, so the executor can find it again (a Slurm job).
  const std::string process_name = "perfwatch-run-" + std::to_string(*run_id);
  const Placement placed = options.slot ? options.slot->place(process_name, false) : Placement{};
  if (!placed.where.empty() || !placed.device_uuid.empty()) {
    if (auto s = writer.set_placement(*run_id, placed.where, placed.device_uuid); !s) return fail(s.error());
  }

  json extra = {{"recorded_env", recorded_env(*manifest)}, {"commit", *sha}};
  if (!toolchain.empty()) extra["toolchain"] = toolchain;
  StoringSink sink(db, *run_id, *manifest, extra, [&](const runner::SweepProgress& p) { reporter.progress(p); },
                   placed.testbed_name, placed.testbed_host);

  reporter.stage("running " + manifest->bench.command + " (run " + std::to_string(*run_id) + ", stderr: " + bench_log.string() + ")");
  runner::SweepRequest request;
  request.manifest = &*manifest;
  request.checkout = tree->root();
  request.stderr_log = bench_log;
  request.seed = options.seed;
  request.points = points;
  request.watch = recording_watch(db, "bench of run " + std::to_string(*run_id), *run_id, options.stop);
  request.extra_env = placed.env;
  request.launcher = placed.launcher;
  runner::SweepResult result = runner::run_sweep(request, sink);
  sink.summarise_unfinished();

  out.status = to_store_status(result.status);
  out.message = result.message;
  // Not ok: did the process fail, or did the executor lose it (a Slurm job
  // preempted, past its time limit, its node gone)? Only the executor knows.
  if (options.slot && result.status != runner::RunStatus::kOk && result.status != runner::RunStatus::kStopped) {
    const Ending ending = options.slot->ended(process_name);
    if (!ending.where.empty()) {
      if (auto s = writer.set_placement(*run_id, ending.where, ""); !s) return fail(s.error());
    }
    if (ending.lost) {
      out.status = store::RunStatus::kLost;
      out.message = *ending.lost + (out.message.empty() ? "" : "; " + out.message);
    }
  }
  out.testbed = sink.testbed();
  out.trials = result.trials;
  out.wall_s = result.wall_s;
  if (result.status != runner::RunStatus::kStoreFailed && !sink.status()) {
    out.status = store::RunStatus::kStoreFailed;
    out.message = "storing the run failed: " + sink.status().error().to_string() +
                  (out.message.empty() ? "" : "; " + out.message);
  }
  store::RunOutcome o;
  o.status = out.status;
  if (result.process.outcome == runner::Outcome::kExited) o.exit_code = result.process.exit_code;
  if (result.process.outcome == runner::Outcome::kSignalled) o.signal = result.process.signal;
  o.message = out.message;
  o.stderr_tail = result.process.tail;
  o.wall_s = result.wall_s;
  if (auto s = writer.finish_run(*run_id, o); !s) return fail(s.error());
  return out;
}

}  // namespace perfwatch::daemon
