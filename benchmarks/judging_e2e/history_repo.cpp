#include "benchmarks/judging_e2e/history_repo.h"

#include <fstream>
#include <sstream>

#include "runner/process.h"

namespace judging_e2e {

namespace fs = std::filesystem;
using perfwatch::fail;
using perfwatch::io_error;

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

nlohmann::json make_manifest(const History& history, const RepoOptions& options) {
  (void)history;
  nlohmann::json runs = {{"per_commit", options.per_commit}, {"max_per_commit", options.max_per_commit}};
  if (options.pinned) runs["pinned_baseline"] = "pin";
  return {
      {"schema_version", 1},
      {"name", options.name},
      {"build", {{"command", "true"}, {"timeout_s", 60}}},
      {"paths", {"truth.json", "perfwatch.json"}},
      {"bench",
       {{"command", shell_quote(options.bench.string()) + " truth.json " + shell_quote(options.run_log.string())},
        {"timeout_s", 120},
        {"idle_timeout_s", 60},
        {"backend", "cpu"},
        {"env", {{"JUDGING_E2E_SEED", std::to_string(options.bench_seed)}}}}},
      {"variants",
       {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}}}},
        {{"name", "alt"}, {"params", {{"block_t", 64}}}, {"hypothesis", "synthetic: 8% faster everywhere"}}}},
      {"sweep", {{"batch", default_batches()}}},
      // Trial noise is 0.3%: 3 trials already pin a run's median; the run
      // factor is what the comparison between commits has to see through.
      {"trials", {{"min", 3}, {"max", 6}, {"target_rel_ci", 0.01}, {"budget_s", 5}, {"min_trial_ms", 1},
                  {"warmup_ms", 0}}},
      {"metric", {{"name", "time_us"}, {"direction", "lower_is_better"}}},
      {"runs", runs},
      {"noise", {{"default_band", 0.05}}}};
}

namespace {

perfwatch::Result<std::string> run_git(const fs::path& dir, const std::string& command) {
  perfwatch::runner::ProcessSpec spec;
  spec.command = command;
  spec.workdir = dir;
  spec.timeout_s = 120;
  spec.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_TERMINAL_PROMPT", "0"}};
  auto out = perfwatch::runner::run_captured(spec);
  if (!out.result.ok())
    return fail(io_error(dir.string(), "`" + command + "` " + out.result.describe() + ": " + out.result.tail));
  return out.out;
}

void data(std::ostream& s, const std::string& text) { s << "data " << text.size() << '\n' << text << '\n'; }

}  // namespace

perfwatch::Result<Repo> write_repo(const History& history, const RepoOptions& options) {
  Repo repo;
  repo.dir = options.dir;
  repo.manifest = make_manifest(history, options);
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) return fail(io_error(options.dir.string(), "cannot create: " + ec.message()));
  if (auto r = run_git(options.dir, "git init -q -b main ."); !r) return fail(r.error());

  // One git fast-import stream: a few milliseconds for the whole history,
  // where a commit at a time would cost two processes each.
  std::ostringstream s;
  const long t0 = 1780000000;  // committer dates one minute apart
  for (int i = 0; i < history.commits(); ++i) {
    s << "blob\nmark :" << (2 * i + 1) << '\n';
    data(s, truth_document(history, i).dump(1) + "\n");
    if (i == 0) {
      s << "blob\nmark :" << (2 * history.commits() + 1) << '\n';
      data(s, repo.manifest.dump(2) + "\n");
    }
    s << "commit refs/heads/main\nmark :" << (2 * i + 2) << '\n'
      << "committer judging_e2e <judging_e2e@example.com> " << (t0 + 60 * i) << " +0000\n";
    data(s, "commit " + std::to_string(i) + ": " + describe_commit(history, i) + "\n");
    if (i > 0) s << "from :" << (2 * i) << '\n';
    s << "M 100644 :" << (2 * i + 1) << " truth.json\n";
    if (i == 0) s << "M 100644 :" << (2 * history.commits() + 1) << " perfwatch.json\n";
    s << '\n';
  }
  s << "reset refs/tags/pin\nfrom :2\n\n";
  const fs::path stream = options.dir / ".git" / "judging_e2e.fast-import";
  {
    std::ofstream out(stream, std::ios::binary);
    out << s.str();
    if (!out) return fail(io_error(stream.string(), "cannot write"));
  }
  if (auto r = run_git(options.dir, "git fast-import --quiet < " + shell_quote(stream.string()) +
                                        " && git reset -q --hard main");
      !r)
    return fail(r.error());
  auto shas = run_git(options.dir, "git rev-list --reverse --first-parent main");
  if (!shas) return fail(shas.error());
  std::istringstream lines(*shas);
  for (std::string sha; std::getline(lines, sha);)
    if (!sha.empty()) repo.shas.push_back(sha);
  if (static_cast<int>(repo.shas.size()) != history.commits())
    return fail(io_error(options.dir.string(), "git has " + std::to_string(repo.shas.size()) + " commits, not " +
                                                  std::to_string(history.commits())));
  return repo;
}

}  // namespace judging_e2e
