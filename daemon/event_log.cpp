#include "daemon/event_log.h"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "common/text.h"

namespace perfwatch::daemon {

Event::Event(EventLog& log, std::string_view step) : log_(log), step_(step) {}

Event::~Event() { emit(); }

Event& Event::commit(std::string_view sha) {
  commit_ = std::string(sha.substr(0, 10));
  return *this;
}

Event& Event::add(std::string_view key, std::string_view value) {
  fields_.emplace_back(std::string(key), EventLog::quote(value));
  return *this;
}

Event& Event::add(std::string_view key, double value) {
  char buf[64];
  if (!std::isfinite(value)) {
    std::snprintf(buf, sizeof buf, "%s", std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf"));
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", value);
  }
  fields_.emplace_back(std::string(key), buf);
  return *this;
}

Event& Event::add(std::string_view key, long long value) {
  fields_.emplace_back(std::string(key), std::to_string(value));
  return *this;
}

void Event::emit() {
  if (emitted_) return;
  emitted_ = true;
  std::string line = EventLog::timestamp();
  if (!commit_.empty()) line += " commit=" + commit_;
  line += " step=" + EventLog::quote(step_);
  for (const auto& [k, v] : fields_) line += " " + k + "=" + v;
  log_.write(line);
}

EventLog::EventLog()
    : writer_([](std::string_view line) {
        std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
        std::fflush(stderr);
      }) {}

EventLog::EventLog(Writer writer) : writer_(std::move(writer)) {}

void EventLog::write(const std::string& line) {
  std::lock_guard lock(mutex_);
  writer_(line);
}

std::string EventLog::quote(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || u < 0x20 || u >= 0x7F) plain = false;
  }
  if (plain) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  // A subject or a bench's message goes to a terminal or a log reader: no
  // control sequences, and valid UTF-8.
  return terminal_safe(out) + "\"";
}

std::string EventLog::timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace perfwatch::daemon
