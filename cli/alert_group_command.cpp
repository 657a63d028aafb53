#include "cli/alert_group_command.h"

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli_support.h"
#include "store/alert_group_store.h"
#include "views/alert_group_view.h"

namespace perfwatch::cli {

namespace {

struct GroupsArgs {
  std::string repo;
  bool all = false;
  bool closed = false;
  std::string testbed;
  std::string commit;
  int limit = views::AlertGroupsRequest{}.limit;
  bool json = false;
};

struct TriageArgs {
  std::string repo;
  std::string commit;
  std::string as;
  std::string reason;
  std::string by;
  std::string testbed;
};

std::optional<store::TestbedId> testbed_id(store::Database& db, const std::string& commit, const std::string& testbed,
                                           std::optional<store::RepoId> repo, int* code) {
  if (testbed.empty()) return std::nullopt;
  // A testbed named for a listing: resolved through a commit only when one is given.
  if (!commit.empty()) {
    auto key = views::resolve_group(db, repo, commit, testbed);
    if (!key) {
      *code = report_view_error(key.error());
      return std::nullopt;
    }
    return key->testbed;
  }
  try {
    return static_cast<store::TestbedId>(std::stoll(testbed));
  } catch (...) {
    *code = report_error(invalid_argument("--testbed " + testbed, "give the testbed's id (as `flags groups` shows) "
                                                                  "or a --commit with it"));
    return std::nullopt;
  }
}

int list_groups(const GlobalOptions& global, const GroupsArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  auto repo = repo_of(*db, args.repo);
  if (!repo) return report_error(repo.error());
  views::AlertGroupsRequest r;
  r.repo = *repo;
  r.state = args.all ? "any" : args.closed ? "closed" : "open";
  r.limit = args.limit;
  if (!args.commit.empty()) r.commit = args.commit;
  int code = kExitOk;
  r.testbed = testbed_id(*db, args.commit, args.testbed, *repo, &code);
  if (code != kExitOk) return code;
  auto view = views::alert_groups_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.json) {
    print_json(views::alert_groups_document(*view));
  } else {
    print_text(views::alert_groups_text(*view));
  }
  return kExitOk;
}

int triage_group(const GlobalOptions& global, const TriageArgs& args) {
  const auto triage = views::parse_person_triage(args.as);
  if (!triage) return report_error(invalid_argument("--as " + args.as, "must be ack, invalid or expected"));
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  auto repo = repo_of(*db, args.repo);
  if (!repo) return report_error(repo.error());
  std::optional<std::string> testbed;
  if (!args.testbed.empty()) testbed = args.testbed;
  auto key = views::resolve_group(*db, *repo, args.commit, testbed);
  if (!key) return report_view_error(key.error());
  store::GroupTriageRecord record;
  record.commit_id = key->commit.id;
  record.testbed_id = key->testbed;
  record.triage = *triage;
  record.reason = args.reason;
  record.by = args.by;
  if (record.by.empty()) {
    const char* user = std::getenv("USER");
    record.by = user ? user : "cli";
  }
  auto acked = store::AlertGroupWriter(*db).triage(record);
  if (!acked) return report_error(acked.error());
  views::AlertGroupsRequest r;
  r.repo = *repo;
  r.state = "any";
  r.commit = key->commit.sha;
  r.testbed = key->testbed;
  auto view = views::alert_groups_view(*db, r);
  if (!view) return report_view_error(view.error());
  print_text(views::alert_groups_text(*view));
  return kExitOk;
}

}  // namespace

void add_alert_group_commands(CLI::App* flags, const GlobalOptions& global, int* exit_code) {
  auto ga = std::make_shared<GroupsArgs>();
  CLI::App* g = flags->add_subcommand("groups", "Alert groups (the flags of a commit on a testbed), open ones by default");
  g->add_option("--repo", ga->repo, "The repository (default: the only one in the database)");
  g->add_flag("--all", ga->all, "Closed groups too (triaged, recovered)");
  g->add_flag("--closed", ga->closed, "Only closed groups");
  g->add_option("--commit", ga->commit, "Only this commit's groups (a sha or prefix)");
  g->add_option("--testbed", ga->testbed, "Only this testbed's groups (its id; or its name with --commit)");
  g->add_option("--limit", ga->limit, "At most this many, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kAlertGroupsLimitMax));
  g->add_flag("--json", ga->json, "As JSON (the API's document, schemas/api/alert_groups.schema.json)");
  g->callback([&global, ga, exit_code] { *exit_code = list_groups(global, *ga); });

  auto ta = std::make_shared<TriageArgs>();
  CLI::App* t = flags->add_subcommand("triage", "Triage a whole alert group with a reason: its flags are acknowledged");
  t->add_option("commit", ta->commit, "The group's commit (a sha or prefix)")->required();
  t->add_option("--as", ta->as, "ack (looked at, known), invalid (not a real change) or expected (meant)")->required();
  t->add_option("--reason", ta->reason, "Why")->required();
  t->add_option("--by", ta->by, "Who triages it (default: $USER)");
  t->add_option("--testbed", ta->testbed, "The testbed (name or id), when the commit has flags on several");
  t->add_option("--repo", ta->repo, "The repository (default: the only one in the database)");
  t->callback([&global, ta, exit_code] { *exit_code = triage_group(global, *ta); });
}

}  // namespace perfwatch::cli
