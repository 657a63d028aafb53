// JSON text written straight into a string, for the one response where
// building an nlohmann::json tree first costs more than the query behind it
// (a point's history: thousands of small objects). The output is what
// nlohmann::json::dump would give for the same document, but for the order
// of keys (as written) and number formatting (shortest round-trip form).
//
//   std::string out;
//   JsonWriter w(out);
//   w.begin_object().key("median").value(1.5).key("flag").null().end_object();
//
// Strings are escaped; invalid UTF-8 becomes U+FFFD (as the server's dump
// does). Keys must be plain ASCII names (they are not escaped). Misuse (a
// value where a key is due, unbalanced ends) is a programming error: asserts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfwatch::views {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);  // null when not finite
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(const std::optional<double>& number) { return number ? value(*number) : null(); }
  JsonWriter& value(const std::optional<std::int64_t>& number) { return number ? value(*number) : null(); }
  JsonWriter& value(const nlohmann::json& doc);  // a small subtree, through nlohmann's dump
  JsonWriter& null();

 private:
  void before_value();

  std::string& out_;
  // Per open container: whether it has an element yet.
  std::vector<bool> has_element_;
  bool after_key_ = false;
};

// Appends `text` as a JSON string literal (quotes included).
void append_json_string(std::string& out, std::string_view text);

}  // namespace perfwatch::views
