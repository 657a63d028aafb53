#include "cli/query_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/alert_group_command.h"
#include "cli/cli_support.h"
#include "common/text.h"
#include "runner/git.h"
#include "store/analysis_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "views/commits_view.h"
#include "views/experiment_view.h"
#include "views/flag_view.h"
#include "views/history_view.h"
#include "views/investigation_view.h"
#include "views/run_view.h"
#include "views/webhooks_view.h"

namespace perfwatch::cli {

using nlohmann::json;

namespace {

struct Common {
  std::string repo;
  std::string testbed;  // a name or an id; empty: any (history: the newest run's)
  bool json = false;
};

// --testbed: a testbed's name or id, or an error that lists them.
Result<std::optional<store::TestbedId>> testbed_option(store::Database& db, const std::string& wanted) {
  if (wanted.empty()) return std::optional<store::TestbedId>{};
  auto beds = store::RunReader(db).testbeds();
  if (!beds) return fail(beds.error());
  std::string names;
  for (const auto& b : *beds) {
    if (b.name == wanted || std::to_string(b.id) == wanted) return std::optional<store::TestbedId>{b.id};
    names += (names.empty() ? "" : ", ") + b.name + " (" + std::to_string(b.id) + ")";
  }
  return fail(invalid_argument("--testbed " + wanted, names.empty() ? "no testbed has measured anything yet"
                                                                     : "no such testbed; use one of: " + names));
}

struct ExperimentArgs : Common {
  bool brief = false;
  std::string verdict;
  std::string search;
  std::vector<std::string> params;
  std::string source;
  std::string group;
  int limit = views::ExperimentsRequest{}.limit;
};

struct InvestigationArgs : Common {
  std::string search;
  int limit = views::InvestigationsRequest{}.limit;
};

struct RunsArgs : Common {
  std::string branch;
  std::string commit;
  store::RunId run = 0;
  bool latest = false;
  int limit = views::CommitsRequest{}.limit;
};

struct FlagArgs : Common {
  bool all = false;
  bool acknowledged = false;
  bool withdrawn = false;
  std::string kind;
  std::string variant;
  std::string commit;
  int limit = views::FlagsRequest{}.limit;
};

struct HistoryArgs : Common {
  std::string branch;
  std::string variant;
  std::string point;
  std::string metric;
  int limit = views::HistoryRequest{}.limit;
};

struct WebhookArgs {
  std::string state;
  store::FlagId flag = 0;
  int limit = views::WebhooksRequest{}.limit;
  bool json = false;
};

struct AckArgs {
  store::FlagId id = 0;
  std::string reason;
  std::string by;
};

// The repo a query is about: --repo's path, or the only one (nullopt then:
// the view applies the same rule and names the field).
// The sha a --commit names: a revision git resolves in --repo, or a sha
// (prefix) as the store knows it.
std::string sha_of(const std::string& repo_path, const std::string& rev) {
  if (repo_path.empty()) return rev;
  runner::Git git(repo_path);
  auto resolved = git.resolve(rev);
  return resolved ? *resolved : rev;
}

std::optional<std::string> optional_text(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

int query_experiments(const GlobalOptions& global, const ExperimentArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  views::ExperimentsRequest r;
  r.text = args.search;
  r.limit = args.limit;
  r.group = args.group;
  r.params = args.params;
  if (!args.verdict.empty()) {
    std::string word = args.verdict == "no-effect" ? "no_effect" : args.verdict;
    r.verdict = store::parse_experiment_verdict(word);
    if (!r.verdict) {
      return report_error(invalid_argument("--verdict " + args.verdict,
                                           "must be accepted, rejected, mixed, no_effect or pending"));
    }
  }
  if (!args.source.empty()) {
    r.source = store::parse_experiment_source(args.source);
    if (!r.source) return report_error(invalid_argument("--source " + args.source, "must be auto, trailer or manual"));
  }
  auto repo = repo_of(*db, args.repo);
  if (!repo) return report_error(repo.error());
  r.repo = *repo;
  auto testbed = testbed_option(*db, args.testbed);
  if (!testbed) return report_error(testbed.error());
  r.testbed = *testbed;
  auto view = views::experiments_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.json) {
    print_json(views::experiments_document(*view));
  } else {
    print_text(views::experiments_text(*view, args.brief));
  }
  return kExitOk;
}

int query_investigations(const GlobalOptions& global, const InvestigationArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  auto repo = repo_of(*db, args.repo);
  if (!repo) return report_error(repo.error());
  views::InvestigationsRequest r;
  r.repo = *repo;
  r.text = args.search;
  r.limit = args.limit;
  auto view = views::investigations_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.json) {
    print_json(views::investigations_document(*view));
  } else {
    print_text(views::investigations_text(*view));
  }
  return kExitOk;
}

int query_flags(const GlobalOptions& global, const FlagArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  views::FlagsRequest r;
  r.limit = args.limit;
  r.state = args.all            ? store::FlagState::kAny
            : args.acknowledged ? store::FlagState::kAcknowledged
            : args.withdrawn    ? store::FlagState::kWithdrawn
                                : store::FlagState::kOpen;
  if (!args.kind.empty()) {
    r.kind = store::parse_flag_kind(args.kind);
    if (!r.kind) return report_error(invalid_argument("--kind " + args.kind, "must be regression, improvement, changepoint or drift"));
  }
  auto repo = repo_of(*db, args.repo);
  if (!repo) return report_error(repo.error());
  r.repo = *repo;
  if (!args.commit.empty()) r.commit = sha_of(args.repo, args.commit);
  if (!args.variant.empty()) r.variant = args.variant;
  auto testbed = testbed_option(*db, args.testbed);
  if (!testbed) return report_error(testbed.error());
  r.testbed = *testbed;
  auto view = views::flags_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.json) {
    print_json(views::flags_document(*view));
  } else {
    print_text(views::flags_text(*view));
  }
  return kExitOk;
}

int ack_flag(const GlobalOptions& global, const AckArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  std::string by = args.by;
  if (by.empty()) {
    const char* user = std::getenv("USER");
    by = user ? user : "cli";
  }
  if (auto s = store::AnalysisWriter(*db).acknowledge_flag(args.id, args.reason, by); !s) return report_error(s.error());
  auto flag = views::flag_view(*db, args.id);
  if (!flag) return report_view_error(flag.error());
  views::FlagsView one;
  one.flags.push_back(flag->flag);
  print_text(views::flags_text(one));
  return kExitOk;
}

// One run's full table: variant x point, median, CI, trials, delta against the baseline.
int print_run_table(store::Database& db, store::RunId run, bool as_json) {
  auto view = views::run_view(db, run);
  if (!view) return report_view_error(view.error());
  if (as_json) {
    print_json(views::run_document(*view));
  } else {
    print_text("run " + std::to_string(run) + " of " + view->commit.sha.substr(0, 10) + " " + view->commit.subject + ": " +
               std::string(store::to_string(view->table.run.status)) + "\n\n" + views::run_text(*view));
  }
  return kExitOk;
}

int query_runs(const GlobalOptions& global, const RunsArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  if (args.run) return print_run_table(*db, args.run, args.json);
  auto repo = repo_of(*db, args.repo);
  if (!repo) return report_error(repo.error());
  views::CommitsRequest r;
  r.repo = *repo;
  r.branch = optional_text(args.branch);
  r.limit = args.limit;
  r.runs = true;
  if (!args.commit.empty()) r.commit = sha_of(args.repo, args.commit);
  auto view = views::commits_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.latest) {
    // Newest first: the first commit with an ok bench run of its own has the
    // table; of its runs, the newest of those that measured the most points
    // (the daemon's extra runs measure only the undecided ones).
    store::RunReader runs(*db);
    for (const auto& entry : view->commits) {
      std::pair<std::size_t, store::RunId> best{0, 0};  // (points, run)
      for (const auto& run : entry.runs) {
        if (run.kind != store::RunKind::kBench || run.status != store::RunStatus::kOk) continue;
        auto table = runs.table(run.id);
        if (!table) return report_error(table.error());
        best = std::max(best, std::pair<std::size_t, store::RunId>{table->points.size(), run.id});
      }
      if (best.second) return print_run_table(*db, best.second, args.json);
    }
    return report_error(not_found(args.commit.empty() ? "the branch" : args.commit, "no ok run yet"));
  }
  if (args.json) {
    print_json(views::commits_document(*view));
  } else {
    print_text(views::runs_text(*view));
  }
  return kExitOk;
}

int query_history(const GlobalOptions& global, const HistoryArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  auto repo = repo_of(*db, args.repo);
  if (!repo) return report_error(repo.error());
  views::HistoryRequest r;
  r.repo = *repo;
  r.branch = optional_text(args.branch);
  r.variant = args.variant;
  r.point = args.point;
  r.metric = optional_text(args.metric);
  r.limit = args.limit;
  auto testbed = testbed_option(*db, args.testbed);
  if (!testbed) return report_error(testbed.error());
  r.testbed = *testbed;
  auto view = views::history_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.json) {
    print_json(json::parse(views::history_document(*view)));
  } else {
    print_text(views::history_text(*view));
  }
  return kExitOk;
}

int query_webhooks(const GlobalOptions& global, const WebhookArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  views::WebhooksRequest r;
  r.limit = args.limit;
  if (args.flag) r.flag = args.flag;
  if (!args.state.empty() && args.state != "any") {
    r.state = store::parse_outbox_state(args.state);
    if (!r.state) return report_error(invalid_argument("--state " + args.state, "must be pending, delivered, failed or any"));
  }
  auto view = views::webhooks_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.json) {
    print_json(views::webhooks_document(*view));
  } else {
    print_text(views::webhooks_text(*view));
  }
  return kExitOk;
}

void add_flag_filters(CLI::App* cmd, FlagArgs* a) {
  cmd->add_option("--repo", a->repo, "The repository (default: the only one in the database)");
  cmd->add_flag("--all", a->all, "Acknowledged and withdrawn flags too");
  cmd->add_flag("--acknowledged", a->acknowledged, "Only acknowledged flags");
  cmd->add_flag("--withdrawn", a->withdrawn, "Only flags that judging withdrew (their evidence grew and no longer holds)");
  cmd->add_option("--kind", a->kind, "regression, improvement, changepoint or drift");
  cmd->add_option("--testbed", a->testbed, "Only flags raised on this testbed (a name or an id)");
  cmd->add_option("--variant", a->variant, "Only this variant's flags");
  cmd->add_option("--commit", a->commit, "Only this commit's flags");
  cmd->add_option("--limit", a->limit, "At most this many, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kFlagsLimitMax));
  cmd->add_flag("--json", a->json, "As JSON (the API's flags document, schemas/api/flags.schema.json)");
}

}  // namespace

void add_query_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd =
      app.add_subcommand("query", "What the store knows: experiments, investigations, runs, flags, a point's history, webhooks");
  cmd->require_subcommand(1);

  auto ex = std::make_shared<ExperimentArgs>();
  CLI::App* e = cmd->add_subcommand("experiments", "What was tried and what happened, with the evidence");
  e->add_option("--verdict", ex->verdict, "accepted, rejected, mixed, no_effect or pending");
  e->add_option("--search", ex->search, "Words that must all occur (hypothesis, conclusion, group, variants)");
  e->add_option("--param", ex->params, "NAME=VALUE a candidate's params must have (repeat for several)");
  e->add_option("--source", ex->source, "auto, trailer or manual");
  e->add_option("--group", ex->group, "Only this investigation (Perf-Experiment: id)");
  e->add_option("--repo", ex->repo, "Only this repository");
  e->add_option("--testbed", ex->testbed, "Only experiments judged on this testbed (a name or an id)");
  e->add_option("--limit", ex->limit, "At most this many, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kExperimentsLimitMax));
  e->add_flag("--brief", ex->brief, "One line per experiment and candidate: its verdict and where it showed");
  e->add_flag("--json", ex->json, "As JSON (the API's experiments document, schemas/api/experiments.schema.json)");
  e->callback([&global, ex, exit_code] { *exit_code = query_experiments(global, *ex); });

  auto inv = std::make_shared<InvestigationArgs>();
  CLI::App* i = cmd->add_subcommand(
      "investigations", "Experiments grouped by investigation (Perf-Experiment id, or the parameter change tried): "
                        "each one's current verdict and the verdicts before it");
  i->add_option("--search", inv->search, "Words that must all occur (hypothesis, conclusion, group, variants)");
  i->add_option("--repo", inv->repo, "Only this repository");
  i->add_option("--limit", inv->limit, "At most this many investigations, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kInvestigationsLimitMax));
  i->add_flag("--json", inv->json, "As JSON (the API's document, schemas/api/investigations.schema.json)");
  i->callback([&global, inv, exit_code] { *exit_code = query_investigations(global, *inv); });

  auto ru = std::make_shared<RunsArgs>();
  CLI::App* r = cmd->add_subcommand("runs", "Runs per commit of the branch, newest first (or one run's table with --run)");
  r->add_option("--repo", ru->repo, "The repository (default: the only one in the database)");
  r->add_option("--branch", ru->branch, "The branch (default: the only one watched, else main, master, the newest)");
  r->add_option("--commit", ru->commit, "Only this commit's runs");
  r->add_option("--run", ru->run, "One run's full table");
  r->add_flag("--latest", ru->latest, "The table of the newest ok run with the most points (of --commit, else of the newest commit measured)");
  r->add_option("--limit", ru->limit, "Commits, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kCommitsLimitMax));
  r->add_flag("--json", ru->json,
              "As JSON: the API's commits document with runs (schemas/api/commits.schema.json), or with --run/--latest "
              "its run document (run.schema.json)");
  r->callback([&global, ru, exit_code] { *exit_code = query_runs(global, *ru); });

  auto fl = std::make_shared<FlagArgs>();
  CLI::App* f = cmd->add_subcommand("flags", "Flags, open ones by default");
  add_flag_filters(f, fl.get());
  f->callback([&global, fl, exit_code] { *exit_code = query_flags(global, *fl); });

  auto hi = std::make_shared<HistoryArgs>();
  CLI::App* h = cmd->add_subcommand(
      "history", "One variant x point over the branch's measured commits: the geometric mean of each one's run "
                 "medians with its CI, its band and flags");
  h->add_option("--repo", hi->repo, "The repository (default: the only one in the database)");
  h->add_option("--branch", hi->branch, "The branch (default: the only one watched, else main, master, the newest)");
  h->add_option("--variant", hi->variant, "The variant")->required();
  h->add_option("--point", hi->point,
                "The sweep point: its label (C48), its key, or axes that name one point (batch=48,heads=16)")
      ->required();
  h->add_option("--metric", hi->metric, "Any metric the bench declared (default: the judged one)");
  h->add_option("--testbed", hi->testbed, "The testbed (a name or an id; default: the one of the newest ok run there)");
  h->add_option("--limit", hi->limit, "Commits from the head")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kHistoryLimitMax));
  h->add_flag("--json", hi->json, "As JSON (the API's history document, schemas/api/history.schema.json)");
  h->callback([&global, hi, exit_code] { *exit_code = query_history(global, *hi); });

  auto wh = std::make_shared<WebhookArgs>();
  CLI::App* w = cmd->add_subcommand(
      "webhooks", "The webhook outbox, newest first: each message pending, delivered (when, after how many attempts) "
                  "or failed (with its last error)");
  w->add_option("--state", wh->state, "pending, delivered, failed or any (default: any)");
  w->add_option("--flag", wh->flag, "Only the messages about this flag");
  w->add_option("--limit", wh->limit, "At most this many, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kWebhooksLimitMax));
  w->add_flag("--json", wh->json, "As JSON (the API's webhooks document, schemas/api/webhooks.schema.json)");
  w->callback([&global, wh, exit_code] { *exit_code = query_webhooks(global, *wh); });
}

void add_flags_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto fl = std::make_shared<FlagArgs>();
  CLI::App* cmd = app.add_subcommand("flags", "List flags (open ones by default), acknowledge one (flags ack ID --reason TEXT), or list and triage alert groups (flags groups; flags triage SHA --as invalid --reason TEXT)");
  add_flag_filters(cmd, fl.get());
  auto ack = std::make_shared<AckArgs>();
  CLI::App* a = cmd->add_subcommand("ack", "Acknowledge a flag with a reason");
  a->add_option("id", ack->id, "The flag's id")->required();
  a->add_option("--reason", ack->reason, "Why it is acknowledged (expected, accepted trade-off, ...)")->required();
  a->add_option("--by", ack->by, "Who acknowledges it (default: $USER)");
  a->callback([&global, ack, exit_code] { *exit_code = ack_flag(global, *ack); });
  add_alert_group_commands(cmd, global, exit_code);
  cmd->callback([cmd, &global, fl, exit_code] {
    if (cmd->get_subcommands().empty()) *exit_code = query_flags(global, *fl);
  });
}

}  // namespace perfwatch::cli
