#include "runner/git.h"

#include <gtest/gtest.h>

#include "common/text.h"
#include "runner/worktree.h"
#include "tests/support/git_fixture.h"

namespace perfwatch::runner {
namespace {

class GitTest : public ::testing::Test {
 protected:
  testing::GitFixture repo;
  Git git{repo.path()};
};

TEST_F(GitTest, ResolvesRevisionsAndRefusesOthers) {
  std::string first = repo.commit({{"kernels/a.cu", "1"}}, "first");
  std::string second = repo.commit({{"kernels/a.cu", "2"}}, "second");
  EXPECT_EQ(git.resolve("HEAD"), second);
  EXPECT_EQ(git.resolve("HEAD~1"), first);
  EXPECT_EQ(git.resolve(first.substr(0, 10)), first);
  auto missing = git.resolve("no-such-branch");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(git.resolve("--output=/tmp/x").has_value()) << "an option is not a revision";
}

TEST_F(GitTest, CommitInfoCarriesMessageAuthorAndTrailers) {
  std::string first = repo.commit({{"a", "1"}}, "first");
  std::string sha = repo.commit({{"a", "2"}},
                                "Try num_warps=8 <script>alert(1)</script>\n\nMore words.\n\n"
                                "Perf-Hypothesis: more warps hide the gather latency\nPerf-Experiment: warps-1");
  auto info = git.commit_info(sha);
  ASSERT_TRUE(info.has_value()) << info.error().to_string();
  EXPECT_EQ(info->sha, sha);
  EXPECT_EQ(info->parent_sha, first);
  EXPECT_EQ(info->author_name, "Test Author");
  EXPECT_EQ(info->author_email, "test@example.com");
  EXPECT_GT(info->committed_at, 1600000000);
  EXPECT_EQ(info->subject, "Try num_warps=8 <script>alert(1)</script>");
  EXPECT_NE(info->message.find("More words."), std::string::npos);
  EXPECT_EQ(info->trailers.at("Perf-Hypothesis"), "more warps hide the gather latency");
  EXPECT_EQ(info->trailers.at("Perf-Experiment"), "warps-1");

  auto root = git.commit_info(first);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->parent_sha, "");
  EXPECT_TRUE(root->trailers.empty());
}

// Git stores a message's bytes as given: a Latin-1 subject, author and
// trailer reach perfwatch as bytes that are not UTF-8.
TEST_F(GitTest, Latin1BytesComeBackAsReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";
  repo.commit({{"a", "1"}}, "first");
  std::string sha = repo.commit_raw({{"a", "2"}}, "Ren\xE9 M\xFCller", "Caf\xE9 tiles\n\nPerf-Hypothesis: na\xEFve split");
  auto info = git.commit_info(sha);
  ASSERT_TRUE(info.has_value()) << info.error().to_string();
  EXPECT_EQ(info->author_name, "Ren" + r + " M" + r + "ller");
  EXPECT_EQ(info->subject, "Caf" + r + " tiles");
  EXPECT_EQ(info->trailers.at("Perf-Hypothesis"), "na" + r + "ve split");
  EXPECT_TRUE(is_valid_utf8(info->message));
}

// A commit that says its encoding is re-encoded by git to UTF-8: nothing lost.
TEST_F(GitTest, ADeclaredLatin1EncodingIsDecoded) {
  repo.commit({{"a", "1"}}, "first");
  repo.git("-c i18n.commitEncoding=ISO-8859-1 commit -q --allow-empty -m 'Caf\xE9'");
  auto info = git.commit_info(*git.resolve("HEAD"));
  ASSERT_TRUE(info.has_value()) << info.error().to_string();
  EXPECT_EQ(info->subject, "Caf\xC3\xA9");
}

std::string show_output(const std::string& date) {
  const std::string sha(40, 'a');
  return sha + '\0' + std::string(40, 'b') + '\0' + "A" + '\0' + "a@x" + '\0' + date + '\0' + "s" + '\0' + "s\n";
}

TEST(GitOutput, CommitterDateIsRangeChecked) {
  auto ok = parse_commit_show(show_output("1700000000"), "repo: sha");
  ASSERT_TRUE(ok.has_value()) << ok.error().to_string();
  EXPECT_EQ(ok->committed_at, 1700000000);
  auto huge = parse_commit_show(show_output("99999999999999999999999"), "repo: sha");
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().to_string(), "repo: sha: git show: committer date '99999999999999999999999' is out of range (64-bit seconds)");
  auto word = parse_commit_show(show_output("soon"), "repo: sha");
  ASSERT_FALSE(word.has_value());
  EXPECT_NE(word.error().message.find("committer date 'soon' is not an integer"), std::string::npos);
  EXPECT_FALSE(parse_commit_show(show_output(""), "w").has_value());
  EXPECT_FALSE(parse_commit_show(show_output("12x"), "w").has_value());
}

TEST(GitOutput, MalformedOutputIsAnErrorNotACrash) {
  EXPECT_FALSE(parse_commit_show("", "w").has_value());
  EXPECT_FALSE(parse_commit_show(std::string("abc\0def"), "w").has_value());
  std::string bad_sha = show_output("1");
  bad_sha[0] = 'Z';
  EXPECT_NE(parse_commit_show(bad_sha, "w").error().message.find("is not a hex sha"), std::string::npos);
  auto list = parse_rev_list(std::string(40, 'a') + "\n\n" + "\xE9vil\n", "repo");
  ASSERT_FALSE(list.has_value());
  EXPECT_TRUE(is_valid_utf8(list.error().message));
  EXPECT_NE(list.error().message.find("line 3"), std::string::npos);
  EXPECT_EQ(parse_trailers("Key: v\xE9\nno colon\nKey: last\n").at("Key"), "last");
}

TEST_F(GitTest, FirstParentRangeIsOldestFirst) {
  std::string a = repo.commit({{"f", "a"}}, "a");
  std::string b = repo.commit({{"f", "b"}}, "b");
  std::string c = repo.commit({{"f", "c"}}, "c");
  EXPECT_EQ(git.first_parent_range("", c), (std::vector<std::string>{a, b, c}));
  EXPECT_EQ(git.first_parent_range(a, c), (std::vector<std::string>{b, c}));
  EXPECT_EQ(git.first_parent_range(c, c), std::vector<std::string>{});
  EXPECT_EQ(git.is_ancestor(a, c), true);
  EXPECT_EQ(git.is_ancestor(c, a), false);
}

TEST_F(GitTest, PathsHashChangesOnlyWithThePaths) {
  std::string a = repo.commit({{"kernels/k.cu", "1"}, {"README.md", "x"}}, "a");
  std::string docs = repo.commit({{"README.md", "y"}}, "docs only");
  std::string kernel = repo.commit({{"kernels/k.cu", "2"}}, "kernel change");
  std::vector<std::string> paths = {"kernels/", "perfwatch.json"};
  auto ha = git.paths_hash(a, paths), hd = git.paths_hash(docs, paths), hk = git.paths_hash(kernel, paths);
  ASSERT_TRUE(ha && hd && hk);
  EXPECT_EQ(*ha, *hd);
  EXPECT_NE(*hd, *hk);
}

TEST_F(GitTest, ShowFileReadsACommitsFile) {
  std::string a = repo.commit({{"perfwatch.json", "{}"}}, "a");
  EXPECT_EQ(git.show_file(a, "perfwatch.json"), "{}");
  EXPECT_FALSE(git.show_file(a, "nope.json").has_value());
}

TEST_F(GitTest, ARelativePathWorks) {
  std::string a = repo.commit({{"f", "1"}}, "a");
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(repo.path().parent_path());
  Git relative(repo.path().filename());
  auto resolved = relative.resolve("HEAD");
  std::filesystem::current_path(cwd);
  EXPECT_EQ(resolved, a);
}

TEST_F(GitTest, NotARepositoryIsRefused) {
  testing::TempDir plain;
  Git not_git(plain.path());
  auto status = not_git.check();
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().message, "not a git repository");
  EXPECT_FALSE(Git(plain / "missing").check().has_value());
}

TEST_F(GitTest, WorktreeMovesBetweenCommitsKeepsIgnoredFilesAndLeavesTheCheckoutAlone) {
  std::string a = repo.commit({{".gitignore", "build/\n"}, {"src/k.cu", "one"}}, "a");
  std::string b = repo.commit({{"src/k.cu", "two"}}, "b");
  repo.git("checkout -q " + a);  // the user's checkout sits on a, with local edits
  testing::write_file(repo.path() / "src/k.cu", "user's local edit");
  testing::TempDir work;
  {
    auto tree = Worktree::checkout(git, work / "wt", b);
    ASSERT_TRUE(tree.has_value()) << tree.error().to_string();
    EXPECT_EQ(testing::read_file(tree->root() / "src/k.cu"), "two");
    testing::write_file(tree->root() / "build/out.o", "object");     // ignored: kept
    testing::write_file(tree->root() / "stray.txt", "left behind");  // untracked: cleaned
  }
  {
    auto tree = Worktree::checkout(git, work / "wt", a);
    ASSERT_TRUE(tree.has_value()) << tree.error().to_string();
    EXPECT_EQ(testing::read_file(tree->root() / "src/k.cu"), "one");
    EXPECT_TRUE(std::filesystem::exists(tree->root() / "build/out.o"));
    EXPECT_FALSE(std::filesystem::exists(tree->root() / "stray.txt"));
  }
  EXPECT_EQ(testing::read_file(repo.path() / "src/k.cu"), "user's local edit");
  EXPECT_EQ(*git.resolve("HEAD"), a);
}

TEST_F(GitTest, AWorktreeIsLeasedToOneUserAtATime) {
  std::string a = repo.commit({{"f", "1"}}, "a");
  testing::TempDir work;
  auto first = Worktree::checkout(git, work / "wt", a);
  ASSERT_TRUE(first.has_value());
  auto second = Worktree::checkout(git, work / "wt", a);
  ASSERT_FALSE(second.has_value());
  EXPECT_NE(second.error().message.find("another perfwatch process"), std::string::npos);
}

TEST_F(GitTest, AStaleWorktreeFolderIsRepaired) {
  std::string a = repo.commit({{"f", "1"}}, "a");
  testing::TempDir work;
  { ASSERT_TRUE(Worktree::checkout(git, work / "wt", a).has_value()); }
  std::filesystem::remove(work / "wt" / ".git");  // as if someone pruned it half-way
  auto again = Worktree::checkout(git, work / "wt", a);
  ASSERT_TRUE(again.has_value()) << again.error().to_string();
  EXPECT_EQ(testing::read_file(again->root() / "f"), "1");
}

}  // namespace
}  // namespace perfwatch::runner
