#include "cli/jobs_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/cli_support.h"
#include "common/text.h"
#include "runner/git.h"
#include "store/queue_store.h"
#include "views/fragments.h"
#include "views/jobs_view.h"

namespace perfwatch::cli {

using nlohmann::json;

namespace {

struct ListArgs {
  std::string repo;
  std::string state;
  std::string commit;
  int limit = views::JobsRequest{}.limit;
  bool json = false;
};

struct RequeueArgs {
  std::string repo;
  std::string commit;
  std::string by;
  bool json = false;
};

// A revision as git resolves it in --repo; without --repo, what was typed (a
// sha or a prefix, as the store knows it).
std::string sha_of(const std::string& repo_path, const std::string& rev) {
  if (repo_path.empty()) return rev;
  auto resolved = runner::Git(repo_path).resolve(rev);
  return resolved ? *resolved : rev;
}

int list_jobs(const GlobalOptions& global, const ListArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  views::JobsRequest r;
  r.limit = args.limit;
  if (!args.state.empty()) {
    r.state = store::parse_job_state(args.state);
    if (!r.state)
      return report_error(invalid_argument("--state " + args.state,
                                           "must be queued, running, done, failed, cut_off, skipped or gave_up"));
  }
  if (!args.repo.empty()) {
    auto repo = find_repo(*db, args.repo);
    if (!repo) return report_error(repo.error());
    r.repo = *repo;
  }
  if (!args.commit.empty()) r.commit = sha_of(args.repo, args.commit);
  auto view = views::jobs_view(*db, r);
  if (!view) return report_view_error(view.error());
  if (args.json) {
    std::cout << json_text(views::jobs_document(*view), 2) << std::endl;
  } else {
    print_text(views::jobs_text(*view));
  }
  return kExitOk;
}

int requeue(const GlobalOptions& global, const RequeueArgs& args) {
  auto db = open_existing_database(global);
  if (!db) return kExitStoreError;
  std::optional<store::RepoId> repo;
  if (!args.repo.empty()) {
    auto found = find_repo(*db, args.repo);
    if (!found) return report_error(found.error());
    repo = *found;
  }
  std::string by = args.by;
  if (by.empty()) {
    const char* user = std::getenv("USER");
    by = user ? user : "cli";
  }
  auto done = store::JobQueue(*db).requeue(repo, sha_of(args.repo, args.commit), by);
  if (!done) return report_error(done.error());
  if (args.json) {
    json doc{{"schema_version", views::kSchemaVersion},
             {"given_up", views::job_json(done->given_up)},
             {"job", views::job_json(done->job)}};
    std::cout << json_text(doc, 2) << std::endl;
  } else {
    print_text("commit " + done->job.commit_sha.substr(0, 10) + ": queued again as job " +
               std::to_string(done->job.id) + " (redoes job " + std::to_string(done->given_up.id) +
               ", given up after " + std::to_string(done->given_up.attempts - done->given_up.stops) +
               " attempt(s)); the running daemon picks it up at its next claim\n");
  }
  return kExitOk;
}

}  // namespace

void add_jobs_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto list = std::make_shared<ListArgs>();
  CLI::App* cmd = app.add_subcommand(
      "jobs", "The daemon's queue, newest first (a commit given up on shows as gave_up), or: jobs requeue REV");
  cmd->add_option("--repo", list->repo, "Only this repository's jobs (and resolve --commit in it)");
  cmd->add_option("--state", list->state, "queued, running, done, failed, cut_off, skipped or gave_up");
  cmd->add_option("--commit", list->commit, "Only this commit's jobs (a full sha, or a revision with --repo)");
  cmd->add_option("--limit", list->limit, "At most this many, newest first")
      ->capture_default_str()
      ->check(CLI::Range(1, views::kJobsLimitMax));
  cmd->add_flag("--json", list->json, "As JSON (the API's jobs document, schemas/api/jobs.schema.json)");

  auto rq = std::make_shared<RequeueArgs>();
  CLI::App* r = cmd->add_subcommand(
      "requeue", "Queue a commit given up on (cut off max_attempts times) again, with max_attempts of its own");
  r->add_option("commit", rq->commit, "The commit: a sha or a unique prefix (4+ hex digits), or a revision with --repo")
      ->required();
  r->add_option("--repo", rq->repo, "The repository (default: any; resolves REV with git)");
  r->add_option("--by", rq->by, "Who re-queues it, named in the new job's message (default: $USER)");
  r->add_flag("--json", rq->json, "As JSON (the API's answer, schemas/api/requeue.schema.json)");
  r->callback([&global, rq, exit_code] { *exit_code = requeue(global, *rq); });
  cmd->callback([cmd, &global, list, exit_code] {
    if (cmd->get_subcommands().empty()) *exit_code = list_jobs(global, *list);
  });
}

}  // namespace perfwatch::cli
