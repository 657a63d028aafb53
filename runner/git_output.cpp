#include "runner/git_output.h"

#include <charconv>

#include "common/text.h"

namespace perfwatch::runner {
namespace {

std::string_view trim_end(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

bool is_sha(std::string_view s) {
  if (s.size() != 40 && s.size() != 64) return false;  // SHA-1 or SHA-256 repositories
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A field's text as shown in an error: valid UTF-8, bounded.
std::string shown(std::string_view s) {
  return "'" + valid_utf8(s.substr(0, 40)) + (s.size() > 40 ? "...'" : "'");
}

}  // namespace

Result<CommitInfo> parse_commit_show(std::string_view out, const std::string& where) {
  std::vector<std::string_view> fields;
  for (int i = 0; i < 6; ++i) {
    const auto nul = out.find('\0');
    if (nul == std::string_view::npos) {
      return fail(io_error(where, "unexpected output from git show: " + std::to_string(fields.size() + 1) +
                                      " fields where 7 were asked for"));
    }
    fields.push_back(out.substr(0, nul));
    out.remove_prefix(nul + 1);
  }
  CommitInfo info;
  if (!is_sha(fields[0])) return fail(io_error(where, "git show: sha " + shown(fields[0]) + " is not a hex sha"));
  info.sha = std::string(fields[0]);
  const std::string_view parent = fields[1].substr(0, fields[1].find(' '));
  if (!parent.empty() && !is_sha(parent)) {
    return fail(io_error(where, "git show: parent " + shown(parent) + " is not a hex sha"));
  }
  info.parent_sha = std::string(parent);
  info.author_name = valid_utf8(fields[2]);
  info.author_email = valid_utf8(fields[3]);
  const std::string_view date = fields[4];
  const auto [end, ec] = std::from_chars(date.data(), date.data() + date.size(), info.committed_at);
  if (date.empty() || ec != std::errc() || end != date.data() + date.size()) {
    return fail(io_error(where, "git show: committer date " + shown(date) +
                                    (ec == std::errc::result_out_of_range ? " is out of range (64-bit seconds)"
                                                                          : " is not an integer of seconds")));
  }
  info.subject = valid_utf8(fields[5]);
  info.message = valid_utf8(trim_end(out));
  return info;
}

std::map<std::string, std::string> parse_trailers(std::string_view out) {
  std::map<std::string, std::string> trailers;
  while (!out.empty()) {
    const auto newline = out.find('\n');
    std::string_view line = out.substr(0, newline);
    out.remove_prefix(newline == std::string_view::npos ? out.size() : newline + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    trailers[valid_utf8(line.substr(0, colon))] = valid_utf8(trim_end(value));
  }
  return trailers;
}

Result<std::vector<std::string>> parse_rev_list(std::string_view out, const std::string& where) {
  std::vector<std::string> shas;
  int line_no = 0;
  while (!out.empty()) {
    const auto newline = out.find('\n');
    const std::string_view line = trim_end(out.substr(0, newline));
    out.remove_prefix(newline == std::string_view::npos ? out.size() : newline + 1);
    ++line_no;
    if (line.empty()) continue;
    if (!is_sha(line)) {
      return fail(io_error(where, "git rev-list: line " + std::to_string(line_no) + ": " + shown(line) +
                                      " is not a hex sha"));
    }
    shas.emplace_back(line);
  }
  return shas;
}

}  // namespace perfwatch::runner
