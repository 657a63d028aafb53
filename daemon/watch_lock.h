// One daemon per database. `perfwatch watch` holds an exclusive lock
// (flock) on <database>.watch-lock for as long as it runs; the file says who
// holds it (pid, host, since). A second watch on the same database is refused
// with those words, before it touches the queue, so it can never cut off the
// first one's live job. The kernel releases the lock when its holder dies, so
// a stale lock (kill -9) is taken over, and the log says whose it was.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/result.h"

namespace perfwatch::daemon {

class WatchLock {
 public:
  // kFailed "database X is watched by pid N on host H since T" when another
  // live process holds it; kIo when the lock file cannot be made.
  static Result<WatchLock> take(const std::filesystem::path& database);
  WatchLock(WatchLock&&) noexcept;
  WatchLock& operator=(WatchLock&&) noexcept;
  WatchLock(const WatchLock&) = delete;
  WatchLock& operator=(const WatchLock&) = delete;
  ~WatchLock();  // releases the lock (the file stays, empty of an owner)

  // The previous holder's line when it died holding the lock ("pid 12 on
  // host h since 2026-12-01T10:00:00Z"), for the log.
  const std::optional<std::string>& taken_over() const { return taken_over_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  WatchLock(int fd, std::filesystem::path path, std::optional<std::string> taken_over);
  int fd_ = -1;
  std::filesystem::path path_;
  std::optional<std::string> taken_over_;
};

}  // namespace perfwatch::daemon
