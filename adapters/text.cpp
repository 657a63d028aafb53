#include "adapters/text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace perfwatch::adapters {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

namespace {
bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }
}  // namespace

std::string_view last_line(std::string_view text) {
  auto lines = split_lines(text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!blank(*it)) return *it;
  return {};
}

std::string tail_lines(std::string_view text, size_t count, size_t max_bytes) {
  auto lines = split_lines(text);
  std::vector<std::string_view> kept;
  for (auto it = lines.rbegin(); it != lines.rend() && kept.size() < count; ++it)
    if (!blank(*it)) kept.push_back(*it);
  std::string out;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) out += (out.empty() ? "" : " | ") + std::string(*it);
  if (out.size() > max_bytes) out = "..." + out.substr(out.size() - max_bytes);
  return out;
}

std::string quote(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) return "'" + std::string(text.substr(0, max_bytes)) + "...'";
  return "'" + std::string(text) + "'";
}

std::optional<double> parse_number(std::string_view text) {
  size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return std::nullopt;
  size_t e = text.find_last_not_of(" \t\r\n");
  std::string s(text.substr(b, e - b + 1));
  // strtod also reads hex, "inf" and "nan"; a measured value is none of those.
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::vector<std::string> nearest(const std::vector<std::string>& names, std::string_view wanted, size_t count) {
  // Ranked by the longest common prefix first (a benchmark family and its
  // first arguments), then by edit distance.
  struct Scored {
    size_t prefix, distance;
    const std::string* name;
  };
  std::vector<Scored> scored;
  for (const auto& name : names) {
    // Near: at most two thirds of the longer name changed. The lengths alone
    // rule most names out before the quadratic distance is computed.
    const size_t limit = std::max(name.size(), wanted.size()) * 2 / 3;
    const size_t length_gap = name.size() > wanted.size() ? name.size() - wanted.size() : wanted.size() - name.size();
    if (length_gap > limit) continue;
    size_t d = edit_distance(name, wanted);
    if (d > limit) continue;
    size_t prefix = 0;
    while (prefix < name.size() && prefix < wanted.size() && name[prefix] == wanted[prefix]) ++prefix;
    scored.push_back({prefix, d, &name});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return a.prefix != b.prefix ? a.prefix > b.prefix : a.distance < b.distance;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < count; ++i) out.push_back(*scored[i].name);
  return out;
}

std::string quote_list(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + quote(n, 120);
  return out;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

}  // namespace perfwatch::adapters
