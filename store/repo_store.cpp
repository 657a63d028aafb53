#include "store/repo_store.h"

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

Result<RepoId> RepoWriter::ensure_repo(const RepoRecord& repo) {
  return guard(db_, "ensure repo " + repo.path, [&] {
    if (repo.path.empty()) raise(ErrorCode::kInvalidArgument, "repo: path is empty");
    Query q(db_,
            "INSERT INTO repos (path, url, name, created_at) VALUES (:path, :url, :name, :now) "
            "ON CONFLICT (path) DO UPDATE SET url = excluded.url, name = excluded.name RETURNING id");
    q->bind(":path", repo.path).bind(":url", repo.url).bind(":name", repo.name).bind(":now", db_.now());
    return q->returning<RepoId>("id");
  });
}

Status RepoWriter::set_branch_head(RepoId repo, std::string_view branch, std::string_view head_sha) {
  return guard(db_, "set head of branch " + std::string(branch), [&] {
    Query q(db_,
            "INSERT INTO branches (repo_id, name, head_sha, first_seen_at, updated_at) "
            "VALUES (:repo, :name, :head, :now, :now) "
            "ON CONFLICT (repo_id, name) DO UPDATE SET head_sha = excluded.head_sha, updated_at = excluded.updated_at");
    q->bind(":repo", repo).bind(":name", branch).bind(":head", head_sha).bind(":now", db_.now());
    q->run();
  });
}

Result<CommitId> RepoWriter::put_commit(const CommitRecord& c) {
  return guard(db_, "put commit " + c.sha, [&] {
    if (c.sha.empty()) raise(ErrorCode::kInvalidArgument, "commit: sha is empty");
    Query q(db_,
            "INSERT INTO commits (repo_id, sha, parent_sha, author, email, committed_at, subject, message, "
            "  paths_hash, inherited_from, perf_hypothesis, perf_experiment, recorded_at) "
            "VALUES (:repo, :sha, :parent, :author, :email, :committed_at, :subject, :message, :paths_hash, "
            "  :inherited_from, :hypothesis, :experiment, :now) "
            "ON CONFLICT (repo_id, sha) DO UPDATE SET parent_sha = excluded.parent_sha, author = excluded.author, "
            "  email = excluded.email, committed_at = excluded.committed_at, subject = excluded.subject, "
            "  message = excluded.message, paths_hash = excluded.paths_hash, "
            "  inherited_from = coalesce(excluded.inherited_from, inherited_from), "
            "  perf_hypothesis = excluded.perf_hypothesis, perf_experiment = excluded.perf_experiment "
            "RETURNING id");
    q->bind(":repo", c.repo_id)
        .bind(":sha", c.sha)
        .bind(":parent", c.parent_sha)
        .bind(":author", c.author)
        .bind(":email", c.email)
        .bind(":committed_at", c.committed_at)
        .bind(":subject", c.subject)
        .bind(":message", c.message)
        .bind(":paths_hash", c.paths_hash)
        .bind(":inherited_from", c.inherited_from)
        .bind(":hypothesis", c.perf_hypothesis)
        .bind(":experiment", c.perf_experiment)
        .bind(":now", db_.now());
    return q->returning<CommitId>("id");
  });
}

Status RepoWriter::set_inherited_from(CommitId commit, CommitId from) {
  return guard(db_, "set inherited_from of commit " + std::to_string(commit), [&] {
    Transaction tx(db_);
    detail::check(tx.status());
    auto repo_of = [&](CommitId id) {
      Query q(db_, "SELECT repo_id, inherited_from FROM commits WHERE id = :id");
      q->bind(":id", id);
      if (!q->step()) raise(ErrorCode::kNotFound, "commit " + std::to_string(id) + ": no such commit");
      return std::pair{q->get<RepoId>("repo_id"), q->get<std::optional<CommitId>>("inherited_from")};
    };
    auto [repo, unused] = repo_of(commit);
    (void)unused;
    // Follow the chain to the commit with results of its own. Inherited
    // commits always point at such a commit, so this is one step; the bound
    // guards against a cycle written by hand.
    CommitId root = from;
    for (int steps = 0;; ++steps) {
      auto [root_repo, next] = repo_of(root);
      if (root_repo != repo)
        raise(ErrorCode::kInvalidArgument, "commit " + std::to_string(from) + " is in another repo");
      if (!next) break;
      if (steps > 64) raise(ErrorCode::kInvalidArgument, "inherited_from chain does not end");
      root = *next;
    }
    if (root == commit)
      raise(ErrorCode::kInvalidArgument, "commit " + std::to_string(commit) + " cannot inherit from itself");
    Query q(db_, "UPDATE commits SET inherited_from = :root WHERE id = :id");
    q->bind(":root", root).bind(":id", commit);
    q->run();
    // Commits that inherited from this one now carry the root's results.
    Query children(db_, "UPDATE commits SET inherited_from = :root WHERE inherited_from = :id");
    children->bind(":root", root).bind(":id", commit);
    children->run();
    detail::check(tx.commit());
  });
}

Result<AnnotationId> RepoWriter::annotate(const AnnotationRecord& note) {
  return guard(db_, "annotate", [&] {
    if (!note.commit_id && !note.run_id) raise(ErrorCode::kInvalidArgument, "annotation: names no commit and no run");
    if (note.text.empty()) raise(ErrorCode::kInvalidArgument, "annotation: text is empty");
    Query q(db_,
            "INSERT INTO annotations (commit_id, run_id, text, author, at) "
            "VALUES (:commit, :run, :text, :author, :at) RETURNING id");
    q->bind(":commit", note.commit_id)
        .bind(":run", note.run_id)
        .bind(":text", note.text)
        .bind(":author", note.author)
        .bind(":at", note.at != 0 ? note.at : db_.now());
    return q->returning<AnnotationId>("id");
  });
}

// ---------------------------------------------------------------- reads

using detail::kAnnotationColumns;
using detail::kBranchColumns;
using detail::kCommitColumns;
using detail::kRepoColumns;

Result<std::vector<RepoRecord>> RepoReader::repos() {
  return guard(db_, "list repos", [&] {
    Query q(db_, std::string("SELECT ") + kRepoColumns + " FROM repos rp ORDER BY id");
    std::vector<RepoRecord> out;
    while (q->step()) out.push_back(detail::read_repo(*q));
    return out;
  });
}

Result<RepoRecord> RepoReader::repo(RepoId id) {
  return guard(db_, "read repo", [&] {
    Query q(db_, std::string("SELECT ") + kRepoColumns + " FROM repos rp WHERE id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, "repo " + std::to_string(id) + ": no such repo");
    return detail::read_repo(*q);
  });
}

Result<std::optional<RepoRecord>> RepoReader::find_repo(std::string_view path) {
  return guard(db_, "find repo", [&]() -> std::optional<RepoRecord> {
    Query q(db_, std::string("SELECT ") + kRepoColumns + " FROM repos rp WHERE path = :path");
    q->bind(":path", path);
    if (!q->step()) return std::nullopt;
    return detail::read_repo(*q);
  });
}

Result<std::vector<BranchRecord>> RepoReader::branches(RepoId repo) {
  return guard(db_, "list branches", [&] {
    Query q(db_,
            std::string("SELECT ") + kBranchColumns + " FROM branches b WHERE b.repo_id = :repo "
            "ORDER BY name");
    q->bind(":repo", repo);
    std::vector<BranchRecord> out;
    while (q->step()) out.push_back(detail::read_branch(*q));
    return out;
  });
}

Result<std::optional<BranchRecord>> RepoReader::branch(RepoId repo, std::string_view name) {
  return guard(db_, "read branch", [&]() -> std::optional<BranchRecord> {
    Query q(db_,
            std::string("SELECT ") + kBranchColumns + " FROM branches b WHERE b.repo_id = :repo AND b.name = :name");
    q->bind(":repo", repo).bind(":name", name);
    if (!q->step()) return std::nullopt;
    return detail::read_branch(*q);
  });
}

Result<CommitRecord> RepoReader::commit(CommitId id) {
  return guard(db_, "read commit", [&] {
    Query q(db_, std::string("SELECT ") + kCommitColumns + " FROM commits c WHERE id = :id");
    q->bind(":id", id);
    if (!q->step()) raise(ErrorCode::kNotFound, "commit " + std::to_string(id) + ": no such commit");
    return detail::read_commit(*q);
  });
}

Result<std::optional<CommitRecord>> RepoReader::find_commit(RepoId repo, std::string_view sha) {
  return guard(db_, "find commit", [&]() -> std::optional<CommitRecord> {
    Query q(db_, std::string("SELECT ") + kCommitColumns + " FROM commits c WHERE repo_id = :repo AND sha = :sha");
    q->bind(":repo", repo).bind(":sha", sha);
    if (!q->step()) return std::nullopt;
    return detail::read_commit(*q);
  });
}

Result<CommitRecord> RepoReader::resolve_commit(RepoId repo, std::string_view prefix) {
  return guard(db_, "resolve commit " + std::string(prefix), [&] {
    bool hex = !prefix.empty() && prefix.find_first_not_of("0123456789abcdef") == std::string_view::npos;
    if (prefix.size() < 4 || !hex)
      raise(ErrorCode::kInvalidArgument, "'" + std::string(prefix) + "': a commit is 4 or more lower-case hex digits");
    // A range over the (repo_id, sha) index: every sha that starts with the
    // prefix sorts in [prefix, prefix + '~'), '~' sorting after any hex digit.
    Query q(db_,
            std::string("SELECT ") + kCommitColumns +
                " FROM commits c WHERE repo_id = :repo AND sha >= :low AND sha < :high ORDER BY sha LIMIT 2");
    q->bind(":repo", repo).bind(":low", prefix).bind(":high", std::string(prefix) + "~");
    if (!q->step()) raise(ErrorCode::kNotFound, std::string(prefix) + ": no such commit");
    auto found = detail::read_commit(*q);
    if (q->step()) raise(ErrorCode::kInvalidArgument, std::string(prefix) + ": ambiguous, names several commits");
    return found;
  });
}

Result<std::vector<AnnotationRecord>> RepoReader::annotations_of_commit(CommitId commit) {
  return guard(db_, "list annotations", [&] {
    Query q(db_, std::string("SELECT ") + kAnnotationColumns + " FROM annotations a WHERE a.commit_id = :id ORDER BY a.id");
    q->bind(":id", commit);
    std::vector<AnnotationRecord> out;
    while (q->step()) out.push_back(detail::read_annotation(*q));
    return out;
  });
}

Result<std::vector<AnnotationRecord>> RepoReader::annotations_of_run(RunId run) {
  return guard(db_, "list annotations", [&] {
    Query q(db_, std::string("SELECT ") + kAnnotationColumns + " FROM annotations a WHERE a.run_id = :id ORDER BY a.id");
    q->bind(":id", run);
    std::vector<AnnotationRecord> out;
    while (q->step()) out.push_back(detail::read_annotation(*q));
    return out;
  });
}

}  // namespace perfwatch::store
