// The daemon's log: one line per event, with the time, the commit and the
// step first, then what happened as key=value pairs:
//
//   2026-11-29T10:00:01Z commit=3f2a9c1e05 step=build status=ok wall_s=42.1
//
// Values with spaces, quotes, '=', control characters or non-ASCII bytes are
// written in double quotes with '"' and '\' escaped, newlines as \n, other
// control characters as \xNN and invalid UTF-8 as U+FFFD, so every line
// splits the same way and none can drive the terminal.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace perfwatch::daemon {

class EventLog;

// One line being built; written when emit() is called (or on destruction).
class Event {
 public:
  Event(EventLog& log, std::string_view step);
  Event(Event&&) = delete;
  ~Event();

  Event& commit(std::string_view sha);  // shown with 10 hex digits
  Event& add(std::string_view key, std::string_view value);
  Event& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  Event& add(std::string_view key, const std::string& value) { return add(key, std::string_view(value)); }
  Event& add(std::string_view key, double value);  // 3 significant decimals at most
  Event& add(std::string_view key, long long value);
  Event& add(std::string_view key, int value) { return add(key, static_cast<long long>(value)); }
  Event& add(std::string_view key, long value) { return add(key, static_cast<long long>(value)); }
  void emit();

 private:
  EventLog& log_;
  std::string step_;
  std::string commit_;
  std::vector<std::pair<std::string, std::string>> fields_;
  bool emitted_ = false;
};

class EventLog {
 public:
  using Writer = std::function<void(std::string_view line)>;  // gets the line without its newline
  // Default: lines go to stderr.
  EventLog();
  explicit EventLog(Writer writer);

  Event event(std::string_view step) { return Event(*this, step); }

  // The text of a value as it appears in a line (quoted when needed).
  static std::string quote(std::string_view value);
  // "2026-11-29T10:00:01Z" for now.
  static std::string timestamp();

 private:
  friend class Event;
  void write(const std::string& line);
  Writer writer_;
  std::mutex mutex_;
};

}  // namespace perfwatch::daemon
