#include "web/query_params.h"

#include <algorithm>
#include <charconv>

namespace perfwatch::web {

namespace {

std::string join(std::initializer_list<std::string_view> words) {
  std::string out;
  for (auto w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '+' || c == '/' || c == '=' || c == ':' || c == '-';
}

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  if (s.empty() || s.size() > 19) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

QueryParams::QueryParams(const Raw& raw, std::initializer_list<std::string_view> known,
                         std::initializer_list<std::string_view> repeatable)
    : raw_(raw) {
  for (auto it = raw_.begin(); it != raw_.end(); it = raw_.upper_bound(it->first)) {
    const std::string& key = it->first;
    bool is_known = std::find(known.begin(), known.end(), key) != known.end();
    if (!is_known) {
      std::string shown = key.size() > 40 ? key.substr(0, 40) + "..." : key;
      fail(bad_parameter(shown, "unknown parameter; known: " + join(known)));
      return;
    }
    bool many = std::find(repeatable.begin(), repeatable.end(), key) != repeatable.end();
    if (!many && raw_.count(key) > 1) {
      fail(bad_parameter(key, "given more than once"));
      return;
    }
  }
}

void QueryParams::fail(ApiError error) {
  if (!error_) error_ = std::move(error);
}

std::optional<std::string> QueryParams::single(std::string_view name) {
  auto it = raw_.find(std::string(name));
  if (it == raw_.end()) return std::nullopt;
  return it->second;
}

std::int64_t QueryParams::integer(std::string_view name, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  return optional_integer(name, min, max).value_or(fallback);
}

std::optional<std::int64_t> QueryParams::optional_integer(std::string_view name, std::int64_t min, std::int64_t max) {
  auto s = single(name);
  if (!s) return std::nullopt;
  auto v = to_int(*s);
  if (!v || *v < min || *v > max) {
    fail(bad_parameter(std::string(name),
                       "must be an integer from " + std::to_string(min) + " to " + std::to_string(max)));
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> QueryParams::id(std::string_view name) {
  auto s = single(name);
  if (!s) return std::nullopt;
  auto v = parse_id(*s);
  if (!v) fail(bad_parameter(std::string(name), "must be a positive integer id"));
  return v;
}

std::optional<std::string> QueryParams::word(std::string_view name, std::initializer_list<std::string_view> words) {
  auto s = single(name);
  if (!s) return std::nullopt;
  if (std::find(words.begin(), words.end(), *s) == words.end()) {
    fail(bad_parameter(std::string(name), "must be one of: " + join(words)));
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> QueryParams::name(std::string_view name) {
  auto s = single(name);
  if (!s) return std::nullopt;
  if (s->empty() || s->size() > 200 || !std::all_of(s->begin(), s->end(), is_name_char)) {
    fail(bad_parameter(std::string(name), "must be 1 to 200 characters of letters, digits and _ . + / = : -"));
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> QueryParams::sha(std::string_view name) {
  auto s = single(name);
  if (!s) return std::nullopt;
  std::string lower = *s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  bool hex = std::all_of(lower.begin(), lower.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (lower.size() < 4 || lower.size() > 64 || !hex) {
    fail(bad_parameter(std::string(name), "must be a commit sha or a prefix of one: 4 to 64 hex digits"));
    return std::nullopt;
  }
  return lower;
}

std::optional<std::string> QueryParams::text(std::string_view name, std::size_t max_chars) {
  auto s = single(name);
  if (!s) return std::nullopt;
  if (s->size() > max_chars) {
    fail(bad_parameter(std::string(name), "must be at most " + std::to_string(max_chars) + " bytes"));
    return std::nullopt;
  }
  if (std::any_of(s->begin(), s->end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    fail(bad_parameter(std::string(name), "must not contain control characters"));
    return std::nullopt;
  }
  return s;
}

bool QueryParams::boolean(std::string_view name, bool fallback) {
  auto s = single(name);
  if (!s) return fallback;
  if (*s == "1" || *s == "true") return true;
  if (*s == "0" || *s == "false") return false;
  fail(bad_parameter(std::string(name), "must be true or false"));
  return fallback;
}

std::vector<std::string> QueryParams::all_names(std::string_view name) {
  std::vector<std::string> out;
  auto [begin, end] = raw_.equal_range(std::string(name));
  for (auto it = begin; it != end; ++it) {
    const std::string& s = it->second;
    if (s.empty() || s.size() > 200 || !std::all_of(s.begin(), s.end(), is_name_char)) {
      fail(bad_parameter(std::string(name), "must be 1 to 200 characters of letters, digits and _ . + / = : -"));
      return {};
    }
    out.push_back(s);
  }
  return out;
}

std::optional<std::int64_t> parse_id(std::string_view digits) {
  auto v = to_int(digits);
  if (!v || *v <= 0) return std::nullopt;
  return v;
}

Reply::error_type parse_id_error(std::string_view field) {
  return bad_parameter(std::string(field), "must be a positive integer id");
}

}  // namespace perfwatch::web
