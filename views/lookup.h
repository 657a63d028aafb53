// What every view resolves first: the repo, branch and commit a request is
// about, the users' labels of points, and what a commit's manifest says.
//
// Errors of the views are the store's Error values. An error about a
// request's field (kInvalidArgument, kNotFound) has that field as its
// `where`: "point", "commit", "branch", ... -- the API answers it as
// {"error": {"field": ...}}, the CLI prints it as the flag (--point). Other
// errors (the database) keep the store's where.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/database.h"
#include "store/manifest_facts.h"
#include "store/records.h"

namespace perfwatch::views {

// A store error re-addressed to a request field: kInvalidArgument and
// kNotFound get `field` as their where (none when field is empty); other
// codes are returned as they are.
Error field_error(Error error, std::string field);

// The repo: by id (kNotFound "repo" for an unknown one), or the only repo
// there is (kNotFound when there is none, kInvalidArgument "repo" when there
// are several).
Result<store::RepoRecord> resolve_repo(store::Database& db, std::optional<store::RepoId> id);

// The branch: by name (kNotFound "branch" when it is not watched), else the
// repo's only watched branch, else "main", else "master", else the one
// updated last.
struct Branch {
  std::string name;
  std::string head_sha;
};
Result<Branch> resolve_branch(store::Database& db, const store::RepoRecord& repo,
                              const std::optional<std::string>& name);

// A commit of the repo by full sha or unique prefix (4+ lower-case hex
// digits); errors name `field` (kNotFound unknown, kInvalidArgument
// ambiguous or malformed).
Result<store::CommitRecord> resolve_commit(store::Database& db, store::RepoId repo, std::string_view sha,
                                           const std::string& field);

// The users' name for a sweep point: its stored label (the manifest's
// sweep.label, "C64"), else its key.
std::string point_label(const store::PointRecord& point);

// A point of `repo` as people name it (`--point`, the API's `point`): its
// label ("C48"), its key ("batch=48,dtype=bf16,heads=16"), or
// some of its axes ("batch=48,heads=16") when they match one point alone.
// kNotFound "point" lists the valid labels; kInvalidArgument "point" when the
// axes match several points (naming them).
Result<store::PointRecord> resolve_point(store::Database& db, store::RepoId repo, std::string_view text);
// A variant of `repo` by name, as its runs used it. kNotFound "variant"
// lists the variants there are (an unknown one must not read as an empty
// history).
Result<std::string> resolve_variant(store::Database& db, store::RepoId repo, std::string_view name);
// The label of every point, by id.
Result<std::map<store::PointId, std::string>> point_labels(store::Database& db);

// What the manifest of `commit`'s newest run says, following inheritance
// (an inherited commit has the facts of the commit whose results it
// carries); the defaults when no run stored a manifest.
Result<store::ManifestFacts> facts_of_commit(store::Database& db, const store::CommitRecord& commit);

// The sha of each commit id asked for, read once per view.
class ShaCache {
 public:
  explicit ShaCache(store::Database& db) : db_(db) {}
  // "" when the id is unset.
  Result<std::string> sha(std::optional<store::CommitId> id);

 private:
  store::Database& db_;
  std::map<store::CommitId, std::string> known_;
};

}  // namespace perfwatch::views
