#include "cli/bench_command.h"

#include <cstdio>
#include <iostream>

#include "cli/cli_support.h"
#include "cli/console.h"
#include "common/text.h"
#include "daemon/bench_commit.h"
#include "daemon/leftovers.h"
#include "views/run_view.h"

namespace perfwatch::cli {

namespace {

struct BenchArgs {
  std::string repo;
  std::string commit = "HEAD";
  std::string manifest;
  bool json = false;
  std::uint64_t seed = 0;
};

int run_bench(const GlobalOptions& global, const BenchArgs& args) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(global.db).parent_path().empty()
                                          ? std::filesystem::path(".")
                                          : std::filesystem::path(global.db).parent_path(), ec);
  auto db = store::Database::open(global.db);
  if (!db) {
    std::fprintf(stderr, "perfwatch: %s\n", db.error().to_string().c_str());
    return kExitStoreError;
  }
  // Runs and process groups a killed perfwatch left (never a live one's).
  auto left = daemon::end_leftovers(*db);
  if (!left) {
    std::fprintf(stderr, "perfwatch: %s\n", left.error().to_string().c_str());
    return kExitStoreError;
  }
  for (store::RunId id : left->runs_cut_off)
    std::fprintf(stderr, "perfwatch: run %lld was cut off: the perfwatch running it had died\n", static_cast<long long>(id));
  daemon::BenchOptions options;
  options.repo = args.repo;
  options.rev = args.commit;
  if (!args.manifest.empty()) options.manifest_path = args.manifest;
  options.state_dir = global.state_dir_path();
  options.seed = args.seed;
  options.purpose = "perfwatch bench";

  ConsoleReporter reporter;
  auto outcome = daemon::bench_commit(*db, options, reporter);
  if (!outcome) {
    reporter.stage("error: " + outcome.error().to_string());
    return outcome.error().code == ErrorCode::kIo ? kExitStoreError : kExitBadInput;
  }

  auto view = views::run_view(*db, outcome->run);
  if (!view) {
    reporter.stage("error: reading the run back: " + view.error().to_string());
    return kExitStoreError;
  }
  const store::CommitRecord& commit = view->commit;
  const store::RunRecord& run = view->table.run;

  std::string summary = "run " + std::to_string(outcome->run) + " of " + outcome->sha.substr(0, 10) + " (" +
                        commit.subject + "): " + std::string(store::to_string(outcome->status)) + ", " +
                        std::to_string(outcome->trials) + " trials";
  if (!outcome->message.empty()) summary += ": " + outcome->message;
  reporter.stage(summary);

  if (args.json) {
    std::cout << json_text(views::run_document(*view), 2) << std::endl;
  } else if (outcome->status != store::RunStatus::kBuildFailed) {
    std::string backend = run.provenance.value("backend", "?");
    std::string device = run.provenance.contains("device") ? run.provenance["device"].value("name", "?") : "?";
    print_text("\n" + outcome->sha.substr(0, 10) + " " + commit.subject + "\nmeasured on " + backend + ": " + device +
               "; median of trials with its distribution-free 95% CI; one run (one process)\n\n" + views::run_text(*view));
  }
  switch (outcome->status) {
    case store::RunStatus::kStoreFailed: return kExitStoreError;
    case store::RunStatus::kOk: return kExitOk;
    case store::RunStatus::kBuildFailed: return kExitBuildFailed;
    default: return kExitRunFailed;
  }
}

}  // namespace

void add_bench_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Benchmark one commit: build it in a worktree, run the sweep, store every trial, print the table");
  cmd->add_option("--repo", args->repo, "The git repository to benchmark")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--commit", args->commit, "The revision to benchmark")->capture_default_str();
  cmd->add_option("--manifest", args->manifest, "A manifest to use instead of perfwatch.json in the commit")->check(CLI::ExistingFile);
  cmd->add_flag("--json", args->json, "Print the run's table as JSON on stdout (the API's run document, schemas/api/run.schema.json)");
  cmd->add_option("--seed", args->seed, "Input seed for the bench (0 = the bench picks one; it is stored either way)");
  cmd->callback([&global, args, exit_code] { *exit_code = run_bench(global, *args); });
}

}  // namespace perfwatch::cli
