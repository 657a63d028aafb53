// Repositories, the branches the watcher follows, commits, and annotations.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"
#include "store/records.h"

namespace perfwatch::store {

class RepoWriter {
 public:
  explicit RepoWriter(Database& db) : db_(db) {}

  // The repo with this path; created if absent, its url and name updated if
  // they changed. created_at is stamped by the store.
  Result<RepoId> ensure_repo(const RepoRecord& repo);

  // Watch state: records that `branch` was seen with this head. Creates the
  // branch row on first sight.
  Status set_branch_head(RepoId repo, std::string_view branch, std::string_view head_sha);

  // The commit's id; inserted if (repo, sha) is new, otherwise its git
  // metadata (author, message, paths_hash, trailers...) is refreshed and its
  // id kept. inherited_from is taken only when set (see set_inherited_from).
  Result<CommitId> put_commit(const CommitRecord& commit);

  // Marks `commit` as carrying the results of `from` (it touched none of the
  // manifest's paths). If `from` itself inherits, the chain is followed to
  // the commit that has results of its own. kInvalidArgument for a commit
  // inheriting from itself or from another repo.
  Status set_inherited_from(CommitId commit, CommitId from);

  Result<AnnotationId> annotate(const AnnotationRecord& note);

 private:
  Database& db_;
};

class RepoReader {
 public:
  explicit RepoReader(Database& db) : db_(db) {}

  Result<std::vector<RepoRecord>> repos();
  Result<RepoRecord> repo(RepoId id);  // kNotFound if absent
  Result<std::optional<RepoRecord>> find_repo(std::string_view path);

  Result<std::vector<BranchRecord>> branches(RepoId repo);
  Result<std::optional<BranchRecord>> branch(RepoId repo, std::string_view name);

  Result<CommitRecord> commit(CommitId id);  // kNotFound if absent
  Result<std::optional<CommitRecord>> find_commit(RepoId repo, std::string_view sha);
  // The one commit of `repo` whose sha starts with `prefix` (4+ hex digits).
  // kNotFound if none, kInvalidArgument if several or the prefix is malformed.
  Result<CommitRecord> resolve_commit(RepoId repo, std::string_view prefix);

  Result<std::vector<AnnotationRecord>> annotations_of_commit(CommitId commit);
  Result<std::vector<AnnotationRecord>> annotations_of_run(RunId run);

 private:
  Database& db_;
};

}  // namespace perfwatch::store
