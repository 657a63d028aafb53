#include "cli/cli_support.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "common/text.h"
#include "store/repo_store.h"

namespace perfwatch::cli {

namespace fs = std::filesystem;

std::optional<store::Database> open_database(const GlobalOptions& global) {
  std::error_code ec;
  fs::path parent = fs::path(global.db).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  auto db = store::Database::open(global.db);
  if (!db) {
    std::fprintf(stderr, "perfwatch: %s\n", db.error().to_string().c_str());
    return std::nullopt;
  }
  return std::move(*db);
}

std::optional<store::Database> open_existing_database(const GlobalOptions& global) {
  std::error_code ec;
  if (!fs::exists(global.db, ec)) {
    std::fprintf(stderr,
                 "perfwatch: --db %s: no database there (queries never create one): pass --db with the file that "
                 "`perfwatch watch` or `perfwatch bench` wrote, or run one of them first\n",
                 terminal_safe(global.db).c_str());
    return std::nullopt;
  }
  return open_database(global);
}

Result<store::RepoId> find_repo(store::Database& db, const std::string& path) {
  if (!path.empty()) {
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    if (ec) return fail(not_found("--repo " + path, ec.message()));
    auto repo = store::RepoReader(db).find_repo(canonical.string());
    if (!repo) return fail(repo.error());
    if (!*repo) return fail(not_found("--repo " + path, "not in " + db.path() + ": watch or bench it first"));
    return (*repo)->id;
  }
  auto repos = store::RepoReader(db).repos();
  if (!repos) return fail(repos.error());
  if (repos->size() == 1) return repos->front().id;
  if (repos->empty()) return fail(not_found(db.path(), "no repository recorded yet: run perfwatch watch or bench first"));
  return fail(invalid_argument("--repo", "the database holds " + std::to_string(repos->size()) + " repositories: name one"));
}

int report_view_error(const Error& error) {
  Error e = error;
  const bool field = (e.code == ErrorCode::kInvalidArgument || e.code == ErrorCode::kNotFound) && !e.where.empty() &&
                     e.where.find_first_of(" :/") == std::string::npos;
  if (field) e.where = "--" + e.where;
  return report_error(e);
}

void print_text(const std::string& text) { std::cout << terminal_safe(text) << std::flush; }

int report_error(const Error& error) {
  std::fprintf(stderr, "perfwatch: %s\n", terminal_safe(error.to_string()).c_str());
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound: return kExitBadInput;
    case ErrorCode::kIo: return kExitStoreError;
    default: return kExitRunFailed;
  }
}

Result<daemon::Executor> load_executor_option(const std::string& path) {
  if (path.empty()) return daemon::local_executor();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return daemon::load_executor(path, host);
}

Result<std::optional<store::RepoId>> repo_of(store::Database& db, const std::string& path) {
  if (path.empty()) return std::optional<store::RepoId>{};
  auto repo = find_repo(db, path);
  if (!repo) return fail(repo.error());
  return std::optional<store::RepoId>{*repo};
}

void print_json(const nlohmann::json& doc) { std::cout << json_text(doc, 2) << std::endl; }

}  // namespace perfwatch::cli
