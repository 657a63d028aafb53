#include "views/json_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace perfwatch::views {

namespace {

// The UTF-8 sequence that starts at s[i]: whether it is valid, and its
// length -- for an invalid one, the "maximal subpart" (the lead byte and
// the continuation bytes that still fitted), which becomes one U+FFFD, as
// nlohmann::json's replacing dump does. Overlong forms, surrogates and code
// points above U+10FFFF are invalid.
struct Sequence {
  bool valid = false;
  std::size_t length = 1;
};

Sequence utf8_sequence(std::string_view s, std::size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  int need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) need = 1;
  else if (c == 0xE0) need = 2, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) need = 2;
  else if (c == 0xED) need = 2, hi = 0x9F;
  else if (c == 0xF0) need = 3, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) need = 3;
  else if (c == 0xF4) need = 3, hi = 0x8F;
  else return {false, 1};
  std::size_t k = 1;
  for (int j = 0; j < need; ++j, ++k) {
    if (i + k >= s.size()) return {false, k};
    unsigned char b = static_cast<unsigned char>(s[i + k]);
    unsigned char low = j == 0 ? lo : 0x80, high = j == 0 ? hi : 0xBF;
    if (b < low || b > high) return {false, k};
  }
  return {true, k};
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  out += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      auto seq = utf8_sequence(s, i);
      if (seq.valid) out.append(s.data() + i, seq.length);
      else out += "\\ufffd";
      i += seq.length;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_ += ',';
    has_element_.back() = true;
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  assert(!has_element_.empty() && !after_key_);
  has_element_.pop_back();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  has_element_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  assert(!has_element_.empty() && !after_key_);
  has_element_.pop_back();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  assert(!has_element_.empty() && !after_key_);
  if (has_element_.back()) out_ += ',';
  has_element_.back() = true;
  out_ += '"';
  out_ += name;
  out_ += "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  append_json_string(out_, text);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    out_ += "null";
    return *this;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, number);
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  out_ += text;
  // "12" would read back as an integer; keep it a number with a fraction as
  // nlohmann writes doubles ("12.0").
  if (text.find_first_of(".e") == std::string_view::npos) out_ += ".0";
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
  before_value();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, number);
  out_.append(buf, static_cast<std::size_t>(end - buf));
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(const nlohmann::json& doc) {
  before_value();
  out_ += doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

}  // namespace perfwatch::views
