#include "runner/git.h"

#include <openssl/evp.h>

#include "runner/process.h"

namespace perfwatch::runner {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string sha256_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}

}  // namespace

// Absolute, because git runs with -C repo *and* in repo: a relative path would
// be resolved twice.
Git::Git(std::filesystem::path repo, double timeout_s) : timeout_s_(timeout_s) {
  std::error_code ec;
  repo_ = std::filesystem::absolute(repo, ec);
  if (ec) repo_ = std::move(repo);
}

Result<std::string> Git::run(const std::vector<std::string>& args) const {
  ProcessSpec spec;
  spec.argv = {"git", "-C", repo_.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.workdir = repo_;
  spec.timeout_s = timeout_s_;
  // Never prompt, never page, never read the user's editor: git is a library here.
  spec.env = {{"GIT_TERMINAL_PROMPT", "0"}, {"GIT_PAGER", "cat"}, {"LC_ALL", "C"}};
  Captured c = run_captured(spec);
  if (!c.result.ok()) {
    std::string what = "git";
    for (const auto& a : args) what += " " + a;
    std::string detail = trim(c.result.tail);
    return fail(Error{ErrorCode::kIo, repo_.string(),
                      what + ": " + c.result.describe() + (detail.empty() ? "" : ": " + detail)});
  }
  return c.out;
}

Status Git::check() const {
  std::error_code ec;
  if (!std::filesystem::is_directory(repo_, ec)) return fail(not_found(repo_.string(), "no such directory"));
  auto out = run({"rev-parse", "--git-dir"});
  if (!out) return fail(invalid_argument(repo_.string(), "not a git repository"));
  return {};
}

Result<std::string> Git::resolve(const std::string& rev) const {
  if (rev.empty() || rev.front() == '-') return fail(invalid_argument("revision", "'" + rev + "' is not a revision"));
  auto out = run({"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
  if (!out) return fail(not_found(repo_.string(), "'" + rev + "' names no commit"));
  return trim(*out);
}

Result<CommitInfo> Git::commit_info(const std::string& sha) const {
  auto out = run({"show", "-s", kCommitShowFormat, sha, "--"});
  if (!out) return fail(out.error());
  auto info = parse_commit_show(*out, repo_.string() + ": " + sha);
  if (!info) return fail(info.error());
  if (auto trailers = run({"show", "-s", "--format=%(trailers:only,unfold)", sha, "--"})) {
    info->trailers = parse_trailers(*trailers);
  }
  return info;
}

Result<std::vector<std::string>> Git::first_parent_range(const std::string& stop, const std::string& tip) const {
  std::vector<std::string> args = {"rev-list", "--first-parent", "--reverse"};
  args.push_back(stop.empty() ? tip : stop + ".." + tip);
  args.push_back("--");
  auto out = run(args);
  if (!out) return fail(out.error());
  return parse_rev_list(*out, repo_.string());
}

Result<bool> Git::is_ancestor(const std::string& ancestor, const std::string& descendant) const {
  ProcessSpec spec;
  spec.argv = {"git", "-C", repo_.string(), "merge-base", "--is-ancestor", ancestor, descendant};
  spec.timeout_s = timeout_s_;
  Captured c = run_captured(spec);
  if (c.result.outcome == Outcome::kExited && (c.result.exit_code == 0 || c.result.exit_code == 1)) {
    return c.result.exit_code == 0;
  }
  return fail(io_error(repo_.string(), "git merge-base --is-ancestor: " + c.result.describe() + ": " + trim(c.result.tail)));
}

Result<std::string> Git::paths_hash(const std::string& sha, const std::vector<std::string>& paths) const {
  std::vector<std::string> args = {"ls-tree", "-r", "--full-tree", sha, "--"};
  for (const auto& p : paths) {
    std::string path = p;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    args.push_back(path);
  }
  auto out = run(args);
  if (!out) return fail(out.error());
  return sha256_hex(*out);
}

Result<std::string> Git::show_file(const std::string& sha, const std::string& path) const {
  auto out = run({"show", sha + ":" + path});
  if (!out) return fail(not_found(sha.substr(0, 12) + ":" + path, "no such file in that commit"));
  return out;
}

}  // namespace perfwatch::runner
