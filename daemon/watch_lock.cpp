#include "daemon/watch_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "runner/process_groups.h"

namespace perfwatch::daemon {

namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[512];
  ::lseek(fd, 0, SEEK_SET);
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > 4096) break;  // the owner line is short; anything longer is not ours
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

WatchLock::WatchLock(int fd, std::filesystem::path path, std::optional<std::string> taken_over)
    : fd_(fd), path_(std::move(path)), taken_over_(std::move(taken_over)) {}

WatchLock::WatchLock(WatchLock&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), taken_over_(std::move(other.taken_over_)) {
  other.fd_ = -1;
}

WatchLock& WatchLock::operator=(WatchLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    taken_over_ = std::move(other.taken_over_);
    other.fd_ = -1;
  }
  return *this;
}

WatchLock::~WatchLock() {
  if (fd_ < 0) return;
  // Empty while unlocked: a line left here means its writer died holding it.
  if (::ftruncate(fd_, 0) != 0) {
  }
  ::close(fd_);  // releases the flock
}

Result<WatchLock> WatchLock::take(const std::filesystem::path& database) {
  std::filesystem::path path = database.string() + ".watch-lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return fail(io_error(path.string(), std::string("cannot open the watch lock: ") + std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string owner = read_all(fd);
    ::close(fd);
    if (err != EWOULDBLOCK)
      return fail(io_error(path.string(), std::string("cannot take the watch lock: ") + std::strerror(err)));
    return fail(Error{ErrorCode::kFailed, database.string(),
                      "database " + database.string() + " is watched by " +
                          (owner.empty() ? std::string("another perfwatch (its lock file says no more)") : owner) +
                          "; one daemon per database: stop that one first, or use another --db"});
  }
  std::string previous = read_all(fd);
  const runner::ProcessIdentity me = runner::self();
  std::string line = "pid " + std::to_string(me.pid) + " on host " + runner::host_name() + " since " + now_utc() + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
    const int err = errno;
    ::close(fd);
    return fail(io_error(path.string(), std::string("cannot write the watch lock: ") + std::strerror(err)));
  }
  std::optional<std::string> stale;
  if (!previous.empty()) stale = previous;
  return WatchLock(fd, std::move(path), std::move(stale));
}

}  // namespace perfwatch::daemon
