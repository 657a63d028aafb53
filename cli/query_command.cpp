#include "cli/query_command.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "cli/render.h"
#include "daemon/run_report.h"
#include "runner/git.h"
#include "store/analysis_store.h"
#include "store/experiment_store.h"
#include "store/history_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"
#include "web/json_views.h"

namespace perfwatch::cli {

using nlohmann::json;

namespace {

struct Common {
  std::string repo;
  bool json = false;
  int limit = 50;
};

struct ExperimentArgs : Common {
  bool brief = false;
  std::string verdict;
  std::string search;
  std::vector<std::string> params;
  std::string source;
  std::string group;
};

struct RunsArgs : Common {
  std::string branch;
  std::string commit;
  store::RunId run = 0;
  bool latest = false;
};

struct FlagArgs : Common {
  bool all = false;
  bool acknowledged = false;
  std::string kind;
  std::string commit;
};

struct HistoryArgs : Common {
  std::string branch;
  std::string variant;
  std::string point;
  double default_band = 0.05;
};

struct AckArgs {
  store::FlagId id = 0;
  std::string reason;
  std::string by;
};

// The commit a --commit names: a revision git resolves in --repo, or a sha prefix the store knows.
Result<store::CommitRecord> find_commit(store::Database& db, store::RepoId repo, const std::string& repo_path,
                                        const std::string& rev) {
  std::string sha = rev;
  if (!repo_path.empty()) {
    runner::Git git(repo_path);
    if (auto resolved = git.resolve(rev)) sha = *resolved;
  }
  return store::RepoReader(db).resolve_commit(repo, sha);
}

// The branch a history is read on: --branch, else the only one watched.
Result<std::string> find_branch(store::Database& db, store::RepoId repo, const std::string& branch) {
  if (!branch.empty()) return branch;
  auto branches = store::RepoReader(db).branches(repo);
  if (!branches) return fail(branches.error());
  if (branches->size() == 1) return branches->front().name;
  if (branches->empty()) return fail(not_found("--branch", "no branch watched yet: run perfwatch watch first"));
  return fail(invalid_argument("--branch", "several branches are watched: name one"));
}

int query_experiments(const GlobalOptions& global, const ExperimentArgs& args) {
  auto db = open_database(global);
  if (!db) return kExitStoreError;
  store::ExperimentFilter f;
  f.text = args.search;
  f.limit = args.limit;
  f.group_key = args.group;
  if (!args.verdict.empty()) {
    std::string word = args.verdict == "no-effect" ? "no_effect" : args.verdict;
    f.verdict = store::parse_experiment_verdict(word);
    if (!f.verdict) {
      return report_error(invalid_argument("--verdict " + args.verdict,
                                           "must be accepted, rejected, mixed, no_effect or pending"));
    }
  }
  if (!args.source.empty()) {
    f.source = store::parse_experiment_source(args.source);
    if (!f.source) return report_error(invalid_argument("--source " + args.source, "must be auto, trailer or manual"));
  }
  for (const auto& p : args.params) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) return report_error(invalid_argument("--param " + p, "must be NAME=VALUE"));
    f.params.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  if (!args.repo.empty()) {
    auto repo = find_repo(*db, args.repo);
    if (!repo) return report_error(repo.error());
    f.repo_id = *repo;
  }
  auto found = store::ExperimentReader(*db).search(f);
  if (!found) return report_error(found.error());
  json out = json::array();
  std::string text;
  for (const auto& e : *found) {
    auto detail = store::ExperimentReader(*db).experiment(e.id);
    if (!detail) return report_error(detail.error());
    if (args.json) {
      json j = web::experiment_json(detail->experiment);
      j["evidence"] = json::array();
      for (const auto& row : detail->evidence) j["evidence"].push_back(web::evidence_json(row));
      j["headlines"] = experiment_headlines(*detail);
      out.push_back(j);
    } else if (args.brief) {
      std::string where;
      for (const auto& c : detail->experiment.candidates) {
        if (c.contains("commit")) where = c["commit"].get<std::string>().substr(0, 10);
      }
      for (const auto& h : experiment_headlines(*detail)) {
        text += "#" + std::to_string(e.id) + " " + std::string(store::to_string(e.source)) +
                (where.empty() ? "" : " " + where) + "  " + h + "\n";
      }
    } else {
      text += experiment_text(*detail) + "\n";
    }
  }
  if (args.json) {
    std::cout << out.dump(2) << std::endl;
  } else {
    std::cout << (found->empty() ? "no experiments match\n" : text);
  }
  return kExitOk;
}

int query_flags(const GlobalOptions& global, const FlagArgs& args) {
  auto db = open_database(global);
  if (!db) return kExitStoreError;
  store::FlagFilter f;
  f.limit = args.limit;
  f.state = args.all ? store::FlagState::kAny : args.acknowledged ? store::FlagState::kAcknowledged : store::FlagState::kOpen;
  if (!args.kind.empty()) {
    f.kind = store::parse_flag_kind(args.kind);
    if (!f.kind) return report_error(invalid_argument("--kind " + args.kind, "must be regression, improvement or changepoint"));
  }
  if (!args.repo.empty() || !args.commit.empty()) {
    auto repo = find_repo(*db, args.repo);
    if (!repo) return report_error(repo.error());
    f.repo_id = *repo;
    if (!args.commit.empty()) {
      auto c = find_commit(*db, *repo, args.repo, args.commit);
      if (!c) return report_error(c.error());
      f.commit_id = c->id;
    }
  }
  auto flags = store::AnalysisReader(*db).flags(f);
  if (!flags) return report_error(flags.error());
  if (args.json) {
    json out = json::array();
    for (const auto& v : *flags) out.push_back(web::flag_json(v));
    std::cout << out.dump(2) << std::endl;
  } else {
    std::cout << flags_text(*flags);
  }
  return kExitOk;
}

int ack_flag(const GlobalOptions& global, const AckArgs& args) {
  auto db = open_database(global);
  if (!db) return kExitStoreError;
  std::string by = args.by;
  if (by.empty()) {
    const char* user = std::getenv("USER");
    by = user ? user : "cli";
  }
  if (auto s = store::AnalysisWriter(*db).acknowledge_flag(args.id, args.reason, by); !s) return report_error(s.error());
  auto flag = store::AnalysisReader(*db).flag(args.id);
  if (!flag) return report_error(flag.error());
  std::cout << flags_text({*flag});
  return kExitOk;
}

// One run's full table: variant x point, median, CI, trials, delta against the baseline.
int print_run_table(store::Database& db, store::RunId run, bool as_json) {
  auto table = store::RunReader(db).table(run);
  if (!table) return report_error(table.error());
  auto commit = store::RepoReader(db).commit(table->run.commit_id);
  if (!commit) return report_error(commit.error());
  daemon::RunReportContext context;
  context.commit = *commit;
  if (table->run.manifest.contains("metric")) context.metric = table->run.manifest["metric"].value("name", "time_us");
  context.lower_is_better = context.metric == "time_us";
  if (as_json) {
    std::cout << daemon::render_run_json(*table, context).dump(2) << std::endl;
  } else {
    std::cout << "run " << run << " of " << commit->sha.substr(0, 10) << " " << commit->subject << ": "
              << store::to_string(table->run.status) << "\n\n"
              << daemon::render_run_text(*table, context);
  }
  return kExitOk;
}

int query_runs(const GlobalOptions& global, const RunsArgs& args) {
  auto db = open_database(global);
  if (!db) return kExitStoreError;
  store::RunReader runs(*db);
  if (args.run) return print_run_table(*db, args.run, args.json);
  auto repo = find_repo(*db, args.repo);
  if (!repo) return report_error(repo.error());
  std::vector<store::CommitRecord> commits;
  if (!args.commit.empty()) {
    auto c = find_commit(*db, *repo, args.repo, args.commit);
    if (!c) return report_error(c.error());
    commits.push_back(*c);
  } else {
    auto branch = find_branch(*db, *repo, args.branch);
    if (!branch) return report_error(branch.error());
    auto chain = store::HistoryReader(*db).chain({*repo, *branch, ""}, args.limit);
    if (!chain) return report_error(chain.error());
    commits = *chain;
  }
  if (args.latest) {
    // Newest first: the first commit with an ok bench run of its own has the
    // table; of its runs, the newest of those that measured the most points
    // (the daemon's extra runs measure only the undecided ones).
    for (const auto& c : commits) {
      auto of = runs.runs_of_commit(c.id);
      if (!of) return report_error(of.error());
      std::pair<std::size_t, store::RunId> best{0, 0};  // (points, run)
      for (const auto& r : *of) {
        if (r.kind != store::RunKind::kBench || r.status != store::RunStatus::kOk) continue;
        auto table = runs.table(r.id);
        if (!table) return report_error(table.error());
        best = std::max(best, std::pair<std::size_t, store::RunId>{table->points.size(), r.id});
      }
      if (best.second) return print_run_table(*db, best.second, args.json);
    }
    return report_error(not_found(args.commit.empty() ? "the branch" : args.commit, "no ok run yet"));
  }
  json out = json::array();
  std::string text = "commit      run    kind            status          trials   wall_s  purpose / message\n";
  for (const auto& c : commits) {
    auto of = runs.runs_of_commit(c.id);
    if (!of) return report_error(of.error());
    std::string inherited;
    if (c.inherited_from) {
      auto from = store::RepoReader(*db).commit(*c.inherited_from);
      inherited = from ? from->sha : "";
    }
    if (args.json) {
      json j = web::commit_brief(c, inherited);
      j["runs"] = json::array();
      for (const auto& r : *of) j["runs"].push_back(web::run_json(r, false));
      out.push_back(j);
      continue;
    }
    if (of->empty()) {
      text += c.sha.substr(0, 10) + "  " +
              (c.inherited_from ? "inherits " + inherited.substr(0, 10) + ": no build, no bench" : std::string("no runs")) +
              "  " + c.subject + "\n";
      continue;
    }
    for (const auto& r : *of) {
      char line[512];
      std::snprintf(line, sizeof line, "%-10s  %-5lld  %-14s  %-14s  %6lld  %7.1f  %s\n", c.sha.substr(0, 10).c_str(),
                    static_cast<long long>(r.id), std::string(store::to_string(r.kind)).c_str(),
                    std::string(store::to_string(r.status)).c_str(), static_cast<long long>(r.trial_count),
                    r.wall_s.value_or(0), (r.purpose + (r.message.empty() ? "" : ": " + r.message)).substr(0, 160).c_str());
      text += line;
    }
  }
  if (args.json) {
    std::cout << out.dump(2) << std::endl;
  } else {
    std::cout << text;
  }
  return kExitOk;
}

int query_history(const GlobalOptions& global, const HistoryArgs& args) {
  auto db = open_database(global);
  if (!db) return kExitStoreError;
  auto repo = find_repo(*db, args.repo);
  if (!repo) return report_error(repo.error());
  auto branch = find_branch(*db, *repo, args.branch);
  if (!branch) return report_error(branch.error());
  store::HistoryQuery q;
  q.start = {*repo, *branch, ""};
  q.variant = args.variant;
  q.point_key = args.point;
  q.limit = args.limit;
  q.include_unmeasured = true;
  auto h = store::HistoryReader(*db).point_history(q);
  if (!h) return report_error(h.error());
  if (args.json) {
    json out = {{"variant", h->variant}, {"point", web::point_json(h->point)},
                {"band", h->band ? web::band_json(*h->band) : web::default_band_json(args.default_band)},
                {"entries", json::array()}};
    for (const auto& e : h->entries) {
      json j = {{"commit_id", e.commit_id}, {"sha", e.sha}, {"subject", e.subject},
                {"inherited_from", e.inherited_from ? json(*e.inherited_from) : json(nullptr)},
                {"runs", json::array()}};
      for (const auto& r : e.runs) j["runs"].push_back({{"run_id", r.run_id}, {"median", r.median}, {"n", r.n}});
      if (e.pooled) {
        j["value"] = e.pooled->median;
        j["ci"] = {web::number_or_null(e.pooled->ci_low), web::number_or_null(e.pooled->ci_high)};
      }
      j["flag"] = e.flag ? web::flag_brief(*e.flag) : json(nullptr);
      out["entries"].push_back(j);
    }
    std::cout << out.dump(2) << std::endl;
  } else {
    std::cout << history_text(*h, args.default_band);
  }
  return kExitOk;
}

void add_flag_filters(CLI::App* cmd, FlagArgs* a) {
  cmd->add_option("--repo", a->repo, "The repository (default: the only one in the database)");
  cmd->add_flag("--all", a->all, "Acknowledged flags too");
  cmd->add_flag("--acknowledged", a->acknowledged, "Only acknowledged flags");
  cmd->add_option("--kind", a->kind, "regression, improvement or changepoint");
  cmd->add_option("--commit", a->commit, "Only this commit's flags");
  cmd->add_option("--limit", a->limit, "At most this many, newest first")->capture_default_str();
  cmd->add_flag("--json", a->json, "As JSON");
}

}  // namespace

void add_query_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("query", "What the store knows: experiments, runs, flags, a point's history");
  cmd->require_subcommand(1);

  auto ex = std::make_shared<ExperimentArgs>();
  CLI::App* e = cmd->add_subcommand("experiments", "What was tried and what happened, with the evidence");
  e->add_option("--verdict", ex->verdict, "accepted, rejected, mixed, no_effect or pending");
  e->add_option("--search", ex->search, "Words that must all occur (hypothesis, conclusion, group, variants)");
  e->add_option("--param", ex->params, "NAME=VALUE a candidate's params must have (repeat for several)");
  e->add_option("--source", ex->source, "auto, trailer or manual");
  e->add_option("--group", ex->group, "Only this investigation (Perf-Experiment: id)");
  e->add_option("--repo", ex->repo, "Only this repository");
  e->add_option("--limit", ex->limit, "At most this many, newest first")->capture_default_str();
  e->add_flag("--brief", ex->brief, "One line per experiment and candidate: its verdict and where it showed");
  e->add_flag("--json", ex->json, "As JSON");
  e->callback([&global, ex, exit_code] { *exit_code = query_experiments(global, *ex); });

  auto ru = std::make_shared<RunsArgs>();
  CLI::App* r = cmd->add_subcommand("runs", "Runs per commit of the branch, newest first (or one run's table with --run)");
  r->add_option("--repo", ru->repo, "The repository (default: the only one in the database)");
  r->add_option("--branch", ru->branch, "The branch (default: the only one watched)");
  r->add_option("--commit", ru->commit, "Only this commit's runs");
  r->add_option("--run", ru->run, "One run's full table");
  r->add_flag("--latest", ru->latest, "The table of the newest ok run with the most points (of --commit, else of the newest commit measured)");
  r->add_option("--limit", ru->limit, "Commits, newest first")->capture_default_str();
  r->add_flag("--json", ru->json, "As JSON");
  r->callback([&global, ru, exit_code] { *exit_code = query_runs(global, *ru); });

  auto fl = std::make_shared<FlagArgs>();
  CLI::App* f = cmd->add_subcommand("flags", "Flags, open ones by default");
  add_flag_filters(f, fl.get());
  f->callback([&global, fl, exit_code] { *exit_code = query_flags(global, *fl); });

  auto hi = std::make_shared<HistoryArgs>();
  CLI::App* h = cmd->add_subcommand("history", "One variant x point over the branch's commits, with its band and flags");
  h->add_option("--repo", hi->repo, "The repository (default: the only one in the database)");
  h->add_option("--branch", hi->branch, "The branch (default: the only one watched)");
  h->add_option("--variant", hi->variant, "The variant")->required();
  h->add_option("--point", hi->point, "The sweep point's key, e.g. b8_h16_k2048_bf16")->required();
  h->add_option("--limit", hi->limit, "Commits from the head")->capture_default_str();
  h->add_flag("--json", hi->json, "As JSON");
  h->callback([&global, hi, exit_code] { *exit_code = query_history(global, *hi); });
}

void add_flags_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto fl = std::make_shared<FlagArgs>();
  CLI::App* cmd = app.add_subcommand("flags", "List flags (open ones by default), or acknowledge one: flags ack ID --reason TEXT");
  add_flag_filters(cmd, fl.get());
  auto ack = std::make_shared<AckArgs>();
  CLI::App* a = cmd->add_subcommand("ack", "Acknowledge a flag with a reason");
  a->add_option("id", ack->id, "The flag's id")->required();
  a->add_option("--reason", ack->reason, "Why it is acknowledged (expected, accepted trade-off, ...)")->required();
  a->add_option("--by", ack->by, "Who acknowledges it (default: $USER)");
  a->callback([&global, ack, exit_code] { *exit_code = ack_flag(global, *ack); });
  cmd->callback([cmd, &global, fl, exit_code] {
    if (cmd->get_subcommands().empty()) *exit_code = query_flags(global, *fl);
  });
}

}  // namespace perfwatch::cli
