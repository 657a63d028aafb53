// Shared steps of the API's handlers: leasing a connection, resolving the
// repo / branch / commit a request is about (views/lookup.h decides; these
// read the parameters), and turning a view's error into an API error.
#pragma once

#include <expected>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/read_pool.h"
#include "store/records.h"
#include "views/lookup.h"
#include "web/api_error.h"
#include "web/query_params.h"

namespace perfwatch::web {

template <class T>
using Expect = std::expected<T, ApiError>;

// A read-only connection for one request.
Expect<store::ReadPool::Lease> lease(store::ReadPool& pool);

// A view's error (views/lookup.h): kInvalidArgument -> 400 and kNotFound ->
// 404 naming the field the view named; the rest as from_store maps them.
ApiError from_view(const Error& error);

// The repo a request is about: ?repo=<id>, or the only repo there is (400
// when there are several and none is named, 404 for an unknown id).
Expect<store::RepoRecord> resolve_repo(store::Database& db, QueryParams& q);

// The branch: ?branch=<name>, else views::resolve_branch's rule (the only
// one, "main", "master", the one updated last). 404 for an unknown branch.
Expect<views::Branch> resolve_branch(store::Database& db, const store::RepoRecord& repo, QueryParams& q);

// A commit of the repo by full sha or unique prefix; `field` names the
// parameter in errors (404 unknown, 400 ambiguous or malformed).
Expect<store::CommitRecord> resolve_commit(store::Database& db, store::RepoId repo, const std::string& sha,
                                           const std::string& field);

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
// from_store; or a view's Result<T>, mapped with from_view) into `var`,
// returning the error as the reply.
#define WEB_TRY(var, expr)                                               \
  auto var##_expect_ = (expr);                                          \
  if (!var##_expect_) return std::unexpected(std::move(var##_expect_).error()); \
  auto& var = *var##_expect_
#define WEB_TRY_STORE(var, expr)                                        \
  auto var##_result_ = (expr);                                          \
  if (!var##_result_) return std::unexpected(::perfwatch::web::from_store(var##_result_.error())); \
  auto& var = *var##_result_
#define WEB_TRY_VIEW(var, expr)                                         \
  auto var##_view_ = (expr);                                            \
  if (!var##_view_) return std::unexpected(::perfwatch::web::from_view(var##_view_.error())); \
  auto& var = *var##_view_
#define WEB_CHECK_PARAMS(q) \
  if (!(q).ok()) return std::unexpected((q).error())
