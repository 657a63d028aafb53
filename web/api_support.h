// Shared steps of the API's handlers: leasing a connection, resolving the
// repo / branch / commit a request is about, and what a run's manifest says
// about the metric (its direction and the default noise band).
#pragma once

#include <expected>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/read_pool.h"
#include "store/records.h"
#include "web/api_error.h"
#include "web/query_params.h"

namespace perfwatch::web {

template <class T>
using Expect = std::expected<T, ApiError>;

// A read-only connection for one request.
Expect<store::ReadPool::Lease> lease(store::ReadPool& pool);

// The repo a request is about: ?repo=<id>, or the only repo there is (400
// when there are several and none is named, 404 for an unknown id).
Expect<store::RepoRecord> resolve_repo(store::Database& db, QueryParams& q);

// The branch: ?branch=<name>, or the repo's only branch, else "main", else
// "master", else the one updated last. 404 for an unknown branch.
struct Branch {
  std::string name;
  std::string head_sha;
};
Expect<Branch> resolve_branch(store::Database& db, const store::RepoRecord& repo, QueryParams& q);

// A commit of the repo by full sha or unique prefix; `field` names the
// parameter in errors (404 unknown, 400 ambiguous or malformed).
Expect<store::CommitRecord> resolve_commit(store::Database& db, store::RepoId repo, const std::string& sha,
                                           const std::string& field);

// What the manifest of a commit's newest run says (defaults when it has no
// run or the manifest does not say).
struct MetricFacts {
  std::string metric = "time_us";
  bool lower_is_better = true;
  double default_band = 0.05;
};
MetricFacts metric_facts(const nlohmann::json& manifest);
// The facts of `commit`'s newest run (following inheritance).
Expect<MetricFacts> metric_facts_of(store::Database& db, const store::CommitRecord& commit);

// The sha of each commit id asked for, read once per request.
class ShaCache {
 public:
  explicit ShaCache(store::Database& db) : db_(db) {}
  // "" when the id is unset; the error when the read fails.
  Expect<std::string> sha(std::optional<store::CommitId> id);

 private:
  store::Database& db_;
  std::map<store::CommitId, std::string> known_;
};

// The users' label ("C64") of every point, by id.
Expect<std::map<store::PointId, std::string>> point_labels(store::Database& db);

// The server's one read-write connection, for the few writes the API makes
// (acknowledging a flag). Opened on first use; one writer at a time.
class Writer {
 public:
  explicit Writer(std::filesystem::path db) : path_(std::move(db)) {}
  Status with(const std::function<Status(store::Database&)>& write);

 private:
  std::mutex mutex_;
  std::filesystem::path path_;
  std::optional<store::Database> db_;
};

}  // namespace perfwatch::web

// Inside a handler: unwrap an Expect<T> (or a store Result<T>, mapped with
// from_store) into `var`, returning the error as the reply.
#define WEB_TRY(var, expr)                                               \
  auto var##_expect_ = (expr);                                          \
  if (!var##_expect_) return std::unexpected(std::move(var##_expect_).error()); \
  auto& var = *var##_expect_
#define WEB_TRY_STORE(var, expr)                                        \
  auto var##_result_ = (expr);                                          \
  if (!var##_result_) return std::unexpected(::perfwatch::web::from_store(var##_result_.error())); \
  auto& var = *var##_result_
#define WEB_CHECK_PARAMS(q) \
  if (!(q).ok()) return std::unexpected((q).error())
