#include "adapters/placeholders.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "common/text.h"

namespace perfwatch::adapters {

using nlohmann::json;

std::string scalar_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return json_text(value);
  if (value.is_number_float()) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value.get<double>());
    if (ec == std::errc()) return std::string(buf, end);
  }
  return json_text(value);
}

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// Characters that mean nothing to /bin/sh inside a word.
bool shell_plain(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("_.,:/=+@%-").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// Walks the template, calling on_text for literal text and on_name for each
// placeholder. Fails on a malformed template.
template <class OnText, class OnName>
Status walk(std::string_view text, std::string_view where, OnText on_text, OnName on_name) {
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos)
        return fail(invalid_argument(std::string(where), "'${' at offset " + std::to_string(i) + " is never closed"));
      on_text(text.substr(i, close + 1 - i));
      i = close + 1;
    } else if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      on_text("{");
      i += 2;
    } else if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      on_text("}");
      i += 2;
    } else if (c == '{') {
      size_t close = text.find('}', i + 1);
      if (close == std::string_view::npos)
        return fail(invalid_argument(std::string(where), "'{' at offset " + std::to_string(i) +
                                                             " is never closed (write {{ for a literal brace)"));
      std::string_view name = text.substr(i + 1, close - i - 1);
      if (!is_identifier(name))
        return fail(invalid_argument(std::string(where), "'{" + std::string(name) +
                                                             "}' is not a placeholder: a placeholder is {axis}, "
                                                             "{param} or {variant}; write {{ and }} for literal braces"));
      if (auto ok = on_name(name); !ok) return ok;
      i = close + 1;
    } else if (c == '}') {
      return fail(invalid_argument(std::string(where), "a lone '}' at offset " + std::to_string(i) +
                                                           " (write }} for a literal brace)"));
    } else {
      size_t next = text.find_first_of("${}", i + 1);
      if (next == std::string_view::npos) next = text.size();
      on_text(text.substr(i, next - i));
      i = next;
    }
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> placeholders(std::string_view text, std::string_view where) {
  std::vector<std::string> names;
  auto ok = walk(
      text, where, [](std::string_view) {},
      [&](std::string_view name) -> Status {
        for (const auto& n : names)
          if (n == name) return {};
        names.emplace_back(name);
        return {};
      });
  if (!ok) return fail(ok.error());
  return names;
}

std::vector<std::string> unused_params(const Variant& v, const std::vector<std::string>& templates) {
  std::vector<std::string> used;
  for (const auto& t : templates)
    if (auto names = placeholders(t, "")) used.insert(used.end(), names->begin(), names->end());
  std::vector<std::string> unused;
  for (const auto& [name, _] : v.params.items())
    if (std::find(used.begin(), used.end(), name) == used.end()) unused.push_back(name);
  return unused;
}

Result<std::string> expand(std::string_view text, const Variant& v, const Point& p, std::string_view where,
                           Quoting quoting) {
  std::string out;
  auto ok = walk(
      text, where, [&](std::string_view literal) { out += literal; },
      [&](std::string_view name) -> Status {
        const std::string key(name);
        const bool is_axis = p.axes.contains(key);
        const bool is_param = v.params.contains(key);
        const std::string cell = "variant '" + v.name + "' at point '" + p.id + "'";
        if (key == "variant" && (is_axis || is_param))
          return fail(invalid_argument(std::string(where), "{variant} is ambiguous for " + cell + ": there is also " +
                                                               (is_axis ? "an axis" : "a param") + " named variant"));
        if (is_axis && is_param)
          return fail(invalid_argument(std::string(where), "{" + key + "} is ambiguous for " + cell +
                                                               ": it is both an axis and a param; rename one"));
        std::string value;
        std::string what;
        if (key == "variant") {
          value = v.name;
          what = "the variant's name";
        } else if (is_axis) {
          value = scalar_text(p.axes[key]);
          what = "axis " + key;
        } else if (is_param) {
          value = scalar_text(v.params[key]);
          what = "param " + key;
        } else {
          std::string known;
          for (const auto& [k, _] : p.axes.items()) known += (known.empty() ? "" : ", ") + k;
          for (const auto& [k, _] : v.params.items()) known += (known.empty() ? "" : ", ") + k;
          return fail(invalid_argument(std::string(where), "{" + key + "} names no axis of point '" + p.id +
                                                               "' and no param of variant '" + v.name +
                                                               "' (they have: " + (known.empty() ? "none" : known) +
                                                               "; and {variant})"));
        }
        if (quoting == Quoting::kShell && !shell_plain(value))
          return fail(invalid_argument(std::string(where), "{" + key + "} for " + cell + ": the value '" + value +
                                                               "' of " + what +
                                                               " has characters the shell would interpret; pass it "
                                                               "through bench.env, or use a plain value"));
        out += value;
        return {};
      });
  if (!ok) return fail(ok.error());
  return out;
}

}  // namespace perfwatch::adapters
