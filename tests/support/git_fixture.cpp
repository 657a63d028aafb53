#include "tests/support/git_fixture.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace perfwatch::testing {

std::string shell(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = ::pclose(pipe);
  if (status != 0) throw std::runtime_error("command failed (" + std::to_string(status) + "): " + command + "\n" + out);
  return out;
}

namespace {
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}
}  // namespace

GitFixture::GitFixture() : dir_("perfwatch-git") {
  git("init -q -b main");
  git("config user.name 'Test Author'");
  git("config user.email test@example.com");
  git("config commit.gpgsign false");
}

std::string GitFixture::git(const std::string& args) const {
  return shell("git -C " + quote(dir_.path().string()) + " " + args + " 2>&1");
}

std::string GitFixture::commit(const std::map<std::string, std::string>& files, const std::string& message) {
  for (const auto& [name, content] : files) write_file(dir_.path() / name, content);
  git("add -A");
  git("commit -q --allow-empty -m " + quote(message));
  std::string sha = git("rev-parse HEAD");
  while (!sha.empty() && (sha.back() == '\n')) sha.pop_back();
  return sha;
}

std::string GitFixture::commit_raw(const std::map<std::string, std::string>& files, const std::string& author_name,
                                   const std::string& message) {
  auto line = [](std::string s) {
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  };
  for (const auto& [name, content] : files) write_file(dir_.path() / name, content);
  git("add -A");
  std::string object = "tree " + line(git("write-tree")) + "\n";
  if (std::system(("git -C " + quote(dir_.path().string()) + " rev-parse -q --verify HEAD >/dev/null 2>&1").c_str()) == 0) {
    object += "parent " + line(git("rev-parse HEAD")) + "\n";
  }
  const std::string who = author_name + " <test@example.com> 1700000000 +0000\n";
  object += "author " + who + "committer " + who + "\n" + message + "\n";
  const auto path = dir_.path() / ".git" / "raw-commit";
  write_file(path, object);
  std::string sha = line(git("hash-object -t commit -w --literally " + quote(path.string())));
  git("update-ref HEAD " + sha);
  return sha;
}

}  // namespace perfwatch::testing
