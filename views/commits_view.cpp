#include "views/commits_view.h"

#include <cstdio>

#include "store/run_store.h"
#include "views/fragments.h"
#include "views/lookup.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

template <class T>
json word_or_null(const std::optional<T>& v) {
  return v ? json(std::string(store::to_string(*v))) : json(nullptr);
}

}  // namespace

Result<CommitsView> commits_view(store::Database& db, const CommitsRequest& request) {
  if (request.limit < 1 || request.limit > kCommitsLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kCommitsLimitMax)));
  if (request.offset < 0) return fail(invalid_argument("offset", "must not be negative"));
  auto repo = resolve_repo(db, request.repo);
  if (!repo) return fail(repo.error());
  // One commit needs no branch (it may have been benchmarked, not watched).
  Branch branch;
  if (!request.commit || request.branch) {
    auto b = resolve_branch(db, *repo, request.branch);
    if (!b) return fail(b.error());
    branch = std::move(*b);
  }

  CommitsView view;
  view.repo_id = repo->id;
  view.branch = branch.name;
  view.head_sha = branch.head_sha;
  view.limit = request.limit;
  view.offset = request.offset;
  view.with_runs = request.runs;

  // One snapshot for the whole page, even while the daemon writes.
  store::Transaction snapshot(db, store::Transaction::Mode::kDeferred);
  if (!snapshot.status()) return fail(snapshot.status().error());
  std::vector<store::CommitOverview> list;
  if (request.commit) {
    // The chain from that commit, one long: its own overview.
    auto c = resolve_commit(db, repo->id, *request.commit, "commit");
    if (!c) return fail(c.error());
    auto one = store::HistoryReader(db).commits({repo->id, "", c->sha}, 1, 0);
    if (!one) return fail(one.error());
    list = std::move(*one);
  } else {
    // One more than asked says whether there is a next page.
    auto page = store::HistoryReader(db).commits({repo->id, branch.name, branch.head_sha}, request.limit + 1,
                                                 request.offset);
    if (!page) return fail(page.error());
    list = std::move(*page);
    view.has_more = static_cast<int>(list.size()) > request.limit;
    if (view.has_more) list.pop_back();
  }

  ShaCache shas(db);
  store::RunReader runs(db);
  for (auto& o : list) {
    CommitsEntry entry;
    auto inherited = shas.sha(o.commit.inherited_from);
    if (!inherited) return fail(inherited.error());
    entry.inherited_from_sha = *inherited;
    if (request.runs) {
      auto own = runs.runs_of_commit(o.commit.id);
      if (!own) return fail(own.error());
      entry.runs = std::move(*own);
    }
    entry.overview = std::move(o);
    view.commits.push_back(std::move(entry));
  }
  return view;
}

json commits_document(const CommitsView& v) {
  json commits = json::array();
  for (const auto& entry : v.commits) {
    const store::CommitOverview& o = entry.overview;
    json c = commit_brief(o.commit, entry.inherited_from_sha);
    json by_status = json::object();
    for (const auto& [status, n] : o.runs_by_status) by_status[std::string(store::to_string(status))] = n;
    c["status"] = {{"latest_job_state", word_or_null(o.latest_job_state)},
                   {"latest_build_status", word_or_null(o.latest_build_status)},
                   {"latest_run_status", word_or_null(o.latest_run_status)},
                   {"runs_by_status", std::move(by_status)},
                   {"open_regressions", o.open_regressions},
                   {"open_improvements", o.open_improvements}};
    c["cost"] = {{"runs", o.runs},
                 {"trials", o.trials},
                 {"bench_s", o.wall_s},
                 {"build_s", o.build_s},
                 {"total_s", o.wall_s + o.build_s}};
    if (v.with_runs) {
      c["runs"] = json::array();
      for (const auto& r : entry.runs) c["runs"].push_back(run_json(r, false));
    }
    commits.push_back(std::move(c));
  }
  return {{"schema_version", kSchemaVersion},
          {"repo_id", v.repo_id},
          {"branch", v.branch},
          {"head_sha", v.head_sha},
          {"limit", v.limit},
          {"offset", v.offset},
          {"has_more", v.has_more},
          {"commits", std::move(commits)}};
}

std::string runs_text(const CommitsView& v) {
  std::string text = "commit      run    kind            status          trials   wall_s  purpose / message\n";
  for (const auto& entry : v.commits) {
    const store::CommitRecord& c = entry.overview.commit;
    if (entry.runs.empty()) {
      text += c.sha.substr(0, 10) + "  " +
              (c.inherited_from ? "inherits " + entry.inherited_from_sha.substr(0, 10) + ": no build, no bench"
                                : std::string("no runs")) +
              "  " + c.subject + "\n";
      continue;
    }
    for (const auto& r : entry.runs) {
      char line[512];
      std::snprintf(line, sizeof line, "%-10s  %-5lld  %-14s  %-14s  %6lld  %7.1f  %s\n", c.sha.substr(0, 10).c_str(),
                    static_cast<long long>(r.id), std::string(store::to_string(r.kind)).c_str(),
                    std::string(store::to_string(r.status)).c_str(), static_cast<long long>(r.trial_count),
                    r.wall_s.value_or(0),
                    (r.purpose + (r.message.empty() ? "" : ": " + r.message)).substr(0, 160).c_str());
      text += line;
    }
  }
  return text;
}

}  // namespace perfwatch::views
