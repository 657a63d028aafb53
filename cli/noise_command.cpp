#include "cli/noise_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/repo_session.h"
#include "common/text.h"
#include "daemon/noise.h"
#include "store/queue_store.h"
#include "views/noise_view.h"

namespace perfwatch::cli {

namespace {

struct NoiseArgs {
  std::string repo;
  std::string commit = "HEAD";
  std::string manifest;
  int runs = 10;
  bool queue = false;
  bool json = false;
  std::string executor;
  std::string testbed;
};

int run_noise(const GlobalOptions& global, const NoiseArgs& args) {
  auto db = open_database(global);
  if (!db) return kExitStoreError;
  auto session = RepoSession::open(*db, global, args.repo, args.manifest);
  if (!session) return report_error(session.error());
  daemon::Context& ctx = (*session)->context();
  auto executor = load_executor_option(args.executor);
  if (!executor) return report_error(executor.error());
  {
    const auto& beds = executor->testbeds;
    auto it = std::find_if(beds.begin(), beds.end(), [&](const auto& t) { return t.name == args.testbed; });
    if (args.testbed.empty()) it = beds.begin();
    if (it == beds.end()) {
      std::string names;
      for (const auto& t : beds) names += (names.empty() ? "" : ", ") + (t.name.empty() ? "(unnamed)" : t.name);
      return report_error(invalid_argument("--testbed " + args.testbed, "the executor has no such testbed; it has " + names));
    }
    ctx.testbed = *it;
  }

  if (args.queue) {
    auto sha = ctx.git.resolve(args.commit);
    if (!sha) return report_error(invalid_argument("--commit " + args.commit, sha.error().message));
    store::JobRequest r;
    r.repo_id = ctx.repo;
    r.commit_sha = *sha;
    r.kind = store::JobKind::kNoise;
    r.options = {{"runs", args.runs}};
    r.testbed = ctx.testbed.name;
    r.again = true;
    auto q = store::JobQueue(*db).enqueue(r);
    if (!q) return report_error(q.error());
    std::printf("noise job %lld %s for %s (%d A/A runs): the daemon runs it next\n", static_cast<long long>(q->id),
                q->created ? "queued" : "already queued", sha->substr(0, 10).c_str(), args.runs);
    return kExitOk;
  }

  auto result = daemon::calibrate_noise(ctx, args.commit, args.runs);
  if (!result) return report_error(result.error());
  auto view = views::noise_view(*db, result->sha, args.runs, result->ok_runs, result->failure, result->bands,
                                result->devices);
  if (!view) return report_error(view.error());
  if (args.json) {
    std::cout << json_text(views::noise_document(*view), 2) << std::endl;
  } else {
    print_text(views::noise_text(*view));
  }
  if (result->ok_runs == 0) return kExitRunFailed;
  return result->failure.empty() ? kExitOk : kExitRunFailed;
}

}  // namespace

void add_noise_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto args = std::make_shared<NoiseArgs>();
  CLI::App* cmd = app.add_subcommand(
      "noise", "Measure the noise band: run one build K times in separate processes (A/A) and store, per variant x "
               "point, the band for the difference of two measurements of the same code");
  cmd->add_option("--repo", args->repo, "The git repository")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--commit", args->commit, "The revision whose build is measured")->capture_default_str();
  cmd->add_option("--runs", args->runs, "K: A/A runs (10 give the 9 degrees of freedom that calibrate a band)")
      ->capture_default_str()->check(CLI::Range(2, 1000));
  cmd->add_option("--manifest", args->manifest, "A manifest to use instead of perfwatch.json in the commit")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--queue", args->queue, "Queue a noise job for the running daemon instead of measuring now");
  cmd->add_option("--executor", args->executor,
                  "Where the runs go (schemas/executor.schema.json): with local-gpus they spread over every GPU of "
                  "the model, and a GPU that is consistently off is reported and left out")
      ->check(CLI::ExistingFile);
  cmd->add_option("--testbed", args->testbed, "Which of the executor's testbeds (default: its first)");
  cmd->add_flag("--json", args->json, "Print the bands as JSON (schemas/cli/noise.schema.json)");
  cmd->callback([&global, args, exit_code] { *exit_code = run_noise(global, *args); });
}

}  // namespace perfwatch::cli
