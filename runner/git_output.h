// What perfwatch reads from git's output, parsed by pure functions over the
// text (no process, no repository), so that they can be tested and fuzzed
// alone. Git's output is untrusted: a commit's author, subject, message and
// trailers may be any bytes (git stores what it is given), so every text
// field comes back as valid UTF-8 (ill-formed bytes as U+FFFD), and every
// number is range-checked.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace perfwatch::runner {

struct CommitInfo {
  std::string sha;
  std::string parent_sha;      // first parent; empty for a root commit
  std::string author_name;
  std::string author_email;
  std::int64_t committed_at = 0;  // unix seconds, committer date
  std::string subject;
  std::string message;         // the whole message, subject included
  // Trailers such as Perf-Hypothesis and Perf-Experiment, as git parses them;
  // a key given twice keeps the last value.
  std::map<std::string, std::string> trailers;
};

// The format commit_info asks `git show -s` for: NUL-separated fields, as
// the message may contain anything but NUL.
inline constexpr const char* kCommitShowFormat = "--format=%H%x00%P%x00%an%x00%ae%x00%ct%x00%s%x00%B";

// Parses the output of `git show -s <kCommitShowFormat>` (trailers left
// empty). Errors (kIo, where = `where`) name the field: too few fields, a
// sha that is not hex, a committer date that is not an integer of seconds
// or is out of range.
Result<CommitInfo> parse_commit_show(std::string_view out, const std::string& where);

// Parses `git show -s --format=%(trailers:only,unfold)`: one "Key: value"
// per line; lines without a colon are skipped; a key given twice keeps the
// last value.
std::map<std::string, std::string> parse_trailers(std::string_view out);

// Parses `git rev-list` output: one sha per line, blank lines skipped; a line
// that is not a hex sha is an error naming its line.
Result<std::vector<std::string>> parse_rev_list(std::string_view out, const std::string& where);

}  // namespace perfwatch::runner
