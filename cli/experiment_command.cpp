#include "cli/experiment_command.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/repo_session.h"
#include "common/text.h"
#include "daemon/manual_experiment.h"
#include "store/experiment_store.h"
#include "views/experiment_view.h"

namespace perfwatch::cli {

namespace {

struct AddArgs {
  std::string repo;
  std::string manifest;
  daemon::ManualExperiment request;
  bool json = false;
};

struct ConcludeArgs {
  store::ExperimentId id = 0;
  std::string verdict;
  std::string conclusion;
};

struct ShowArgs {
  store::ExperimentId id = 0;
  bool json = false;
};

// The experiment: the API's document (schemas/api/experiment.schema.json) or text.
int print_experiment(store::Database& db, store::ExperimentId id, bool json) {
  auto view = views::experiment_view(db, id);
  if (!view) return report_view_error(view.error());
  if (json) {
    std::cout << json_text(views::experiment_document(*view), 2) << std::endl;
  } else {
    print_text(views::experiment_text(view->entry));
  }
  return kExitOk;
}

int run_add(const GlobalOptions& global, const AddArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  auto session = RepoSession::open(*db, global, args.repo, args.manifest);
  if (!session) return report_error(session.error());
  daemon::Context& ctx = (*session)->context();
  auto id = daemon::record_manual_experiment(ctx, args.request);
  if (!id) return report_error(id.error());
  return print_experiment(*db, *id, args.json);
}

int run_conclude(const GlobalOptions& global, const ConcludeArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  std::optional<store::ExperimentVerdict> verdict;
  if (!args.verdict.empty()) {
    std::string word = args.verdict == "no-effect" ? "no_effect" : args.verdict;
    verdict = store::parse_experiment_verdict(word);
    if (!verdict) {
      return report_error(invalid_argument("--verdict " + args.verdict,
                                           "must be accepted, rejected, mixed, no_effect or pending"));
    }
  }
  if (auto s = store::ExperimentWriter(*db).conclude(args.id, verdict, args.conclusion); !s) {
    return report_error(s.error());
  }
  return print_experiment(*db, args.id, false);
}

}  // namespace

void add_experiment_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("experiment", "Record experiments by hand: add one, conclude one, show one");
  cmd->require_subcommand(1);

  auto add = std::make_shared<AddArgs>();
  CLI::App* a = cmd->add_subcommand(
      "add", "Record a hypothesis with a baseline and candidates (commits, or variant:NAME); the evidence comes from "
             "the runs stored so far");
  a->add_option("--repo", add->repo, "The git repository")->required()->check(CLI::ExistingDirectory);
  a->add_option("--hypothesis", add->request.hypothesis, "What is being tried, and why")->required();
  a->add_option("--baseline", add->request.baseline, "A revision, or variant:NAME")->required();
  a->add_option("--candidate", add->request.candidates, "A revision, or variant:NAME (repeat for several)")
      ->required();
  a->add_option("--commit", add->request.commit, "The commit whose runs compare variants")->capture_default_str();
  a->add_option("--group", add->request.group, "The investigation it belongs to (as Perf-Experiment: trailers name it)");
  a->add_option("--manifest", add->manifest, "A manifest to use instead of perfwatch.json")->check(CLI::ExistingFile);
  a->add_flag("--json", add->json, "Print the experiment as JSON");
  a->callback([&global, add, exit_code] { *exit_code = run_add(global, *add); });

  auto conclude = std::make_shared<ConcludeArgs>();
  CLI::App* c = cmd->add_subcommand("conclude", "Give an experiment a person's verdict and conclusion");
  c->add_option("id", conclude->id, "The experiment's id")->required();
  c->add_option("--verdict", conclude->verdict, "accepted, rejected, mixed, no_effect or pending (default: keep it)");
  c->add_option("--conclusion", conclude->conclusion, "What was learned, in words")->required();
  c->callback([&global, conclude, exit_code] { *exit_code = run_conclude(global, *conclude); });

  auto show = std::make_shared<ShowArgs>();
  CLI::App* s = cmd->add_subcommand("show", "Print one experiment with its evidence table");
  s->add_option("id", show->id, "The experiment's id")->required();
  s->add_flag("--json", show->json, "As JSON (the API's experiment document, schemas/api/experiment.schema.json)");
  s->callback([&global, show, exit_code] {
    auto db = open_existing_database(global);
    *exit_code = db ? print_experiment(*db, show->id, show->json) : kExitStoreError;
  });
}

}  // namespace perfwatch::cli
