#include "runner/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include <boost/process.hpp>

namespace perfwatch::runner {

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kExited: return "exited";
    case Outcome::kSignalled: return "signalled";
    case Outcome::kTimedOut: return "timed_out";
    case Outcome::kFailedToStart: return "failed_to_start";
  }
  return "failed_to_start";
}

Clock::time_point deadline_after(double timeout_s) {
  const auto now = Clock::now();
  if (!(timeout_s > 0)) return Clock::time_point::max();
  // Compared in double seconds, which cannot overflow; what is left fits the clock's duration.
  const double room_s = std::chrono::duration<double>(Clock::time_point::max() - now).count();
  if (timeout_s >= room_s) return Clock::time_point::max();
  return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
}

std::string ProcessResult::describe() const {
  switch (outcome) {
    case Outcome::kExited: return "exited with code " + std::to_string(exit_code);
    case Outcome::kSignalled: {
      const char* name = sigabbrev_np(signal);
      return "killed by signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
    }
    case Outcome::kTimedOut: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f", wall_s);
      return std::string("timed out after ") + buf + " s and was killed";
    }
    case Outcome::kFailedToStart: return "failed to start: " + start_error;
  }
  return "unknown outcome";
}

std::string file_tail(const std::filesystem::path& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(bytes) ? size - static_cast<std::streamoff>(bytes) : 0;
  in.seekg(start);
  std::string out(static_cast<size_t>(size - start), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bp::environment make_env(const ProcessSpec& spec) {
  bp::environment env = boost::this_process::environment();
  for (const auto& [k, v] : spec.env) env[k] = v;
  return env;
}

std::filesystem::path workdir_of(const ProcessSpec& spec) {
  return spec.workdir.empty() ? std::filesystem::current_path() : spec.workdir;
}

// A command with no shell syntax is run directly rather than through
// /bin/sh -c: dash does not exec the last command, so a bench killed by a
// signal would otherwise look like a shell exiting with 128 + N.
bool needs_shell(const std::string& command) {
  return command.find_first_of("|&;<>()$`\\\"'*?[#~=%\n\t{}") != std::string::npos;
}

std::vector<std::string> split_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  for (char c : command) {
    if (c == ' ') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

// The program and its arguments.
std::pair<std::string, std::vector<std::string>> program_of(const ProcessSpec& spec) {
  std::vector<std::string> argv = spec.argv;
  if (!spec.command.empty()) {
    argv = split_words(spec.command);
    static const char* const builtins[] = {"exit", "exec", "cd", "export", "set", "unset", ".", "eval",
                                           "trap", "ulimit", "umask", "wait", "read", "source", "alias"};
    bool builtin = !argv.empty() && std::find(std::begin(builtins), std::end(builtins), argv.front()) != std::end(builtins);
    if (argv.empty() || builtin || needs_shell(spec.command)) return {"/bin/sh", {"-c", spec.command}};
  }
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  std::string exe = argv.front();
  if (exe.find('/') == std::string::npos) {
    auto found = bp::search_path(exe);
    if (!found.empty()) exe = found.string();
  } else if (!std::filesystem::path(exe).is_absolute()) {
    // Relative to the working directory, as a shell would resolve it.
    exe = (workdir_of(spec) / exe).string();
  }
  return {exe, args};
}

// Decodes a waitpid status into the result.
void decode_status(int status, ProcessResult* r) {
  if (WIFEXITED(status)) {
    r->outcome = Outcome::kExited;
    r->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r->outcome = Outcome::kSignalled;
    r->signal = WTERMSIG(status);
  }
}

// Waits for the child until the deadline; on the deadline kills its group.
void wait_child(bp::child& child, bp::group& group, Clock::time_point start, Clock::time_point deadline,
                ProcessResult* r) {
  std::error_code ec;
  // Polling keeps this free of signal handlers, which a library must not own;
  // 5 ms is far below any timeout a user sets.
  while (child.running(ec)) {
    if (Clock::now() >= deadline) {
      group.terminate(ec);
      child.wait(ec);
      r->outcome = Outcome::kTimedOut;
      r->signal = SIGKILL;
      r->wall_s = seconds_since(start);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r->wall_s = seconds_since(start);
  decode_status(child.native_exit_code(), r);
  // Grandchildren that outlive the shell would keep pipes open: end them too.
  group.terminate(ec);
}

}  // namespace

ProcessResult run_logged(const ProcessSpec& spec, const std::filesystem::path& log_path, size_t tail_bytes) {
  ProcessResult r;
  auto start = Clock::now();
  try {
    auto [exe, args] = program_of(spec);
    bp::group group;
    bp::child child(bp::exe = exe, bp::args = args, bp::start_dir = workdir_of(spec).string(), bp::env = make_env(spec),
                    (bp::std_out & bp::std_err) > log_path.string(), bp::std_in < bp::null, bp::limit_handles, group);
    wait_child(child, group, start, deadline_after(spec.timeout_s), &r);
  } catch (const std::exception& e) {
    r.outcome = Outcome::kFailedToStart;
    r.start_error = e.what();
    r.wall_s = seconds_since(start);
  }
  r.tail = file_tail(log_path, tail_bytes);
  return r;
}

Captured run_captured(const ProcessSpec& spec) {
  Captured c;
  auto start = Clock::now();
  auto deadline = deadline_after(spec.timeout_s);
  try {
    auto [exe, args] = program_of(spec);
    bp::pipe out_pipe, err_pipe;
    bp::group group;
    bp::child child(bp::exe = exe, bp::args = args, bp::start_dir = workdir_of(spec).string(), bp::env = make_env(spec),
                    bp::std_out > out_pipe, bp::std_err > err_pipe, bp::std_in < bp::null, group);
    // Drain both pipes together so that neither can fill up and stall the child.
    int fds[2] = {out_pipe.native_source(), err_pipe.native_source()};
    std::string* sinks[2] = {&c.out, &c.result.tail};
    bool open[2] = {true, true};
    char buf[65536];
    while ((open[0] || open[1]) && Clock::now() < deadline) {
      pollfd pfds[2];
      int n = 0;
      int which[2];
      for (int i = 0; i < 2; ++i) {
        if (open[i]) {
          pfds[n] = {fds[i], POLLIN, 0};
          which[n++] = i;
        }
      }
      int ready = ::poll(pfds, n, 50);
      if (ready < 0 && errno != EINTR) break;
      for (int j = 0; j < n; ++j) {
        if (!(pfds[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t got = ::read(pfds[j].fd, buf, sizeof buf);
        if (got > 0) sinks[which[j]]->append(buf, static_cast<size_t>(got));
        else if (got == 0 || errno != EINTR) open[which[j]] = false;
      }
    }
    wait_child(child, group, start, deadline, &c.result);
  } catch (const std::exception& e) {
    c.result.outcome = Outcome::kFailedToStart;
    c.result.start_error = e.what();
    c.result.wall_s = seconds_since(start);
  }
  if (c.result.tail.size() > 8192) c.result.tail = c.result.tail.substr(c.result.tail.size() - 8192);
  return c;
}

struct LineChild::Impl {
  bp::group group;
  bp::child child;
  int in_fd = -1;    // our end of the child's stdin
  int out_fd = -1;   // our end of the child's stdout
  std::string buffer;
  bool eof = false;
  Clock::time_point start;
  std::filesystem::path stderr_log;

  ~Impl() {
    std::error_code ec;
    if (child.valid() && child.running(ec)) {
      group.terminate(ec);
      child.wait(ec);
    }
    if (in_fd >= 0) ::close(in_fd);
    if (out_fd >= 0) ::close(out_fd);
  }
};

LineChild::LineChild(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LineChild::~LineChild() = default;

Result<std::unique_ptr<LineChild>> LineChild::start(const ProcessSpec& spec, const std::filesystem::path& stderr_log) {
  std::signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->stderr_log = stderr_log;
  impl->start = Clock::now();
  try {
    auto [exe, args] = program_of(spec);
    bp::pipe in_pipe, out_pipe;
    impl->child = bp::child(bp::exe = exe, bp::args = args, bp::start_dir = workdir_of(spec).string(),
                            bp::env = make_env(spec), bp::std_in < in_pipe, bp::std_out > out_pipe,
                            bp::std_err > stderr_log.string(), impl->group);
    // Take ownership of our ends; the pipe objects must not close them.
    // Close-on-exec, so that no later child inherits them and holds the bench's
    // stdin open after we close it.
    impl->in_fd = ::fcntl(in_pipe.native_sink(), F_DUPFD_CLOEXEC, 0);
    impl->out_fd = ::fcntl(out_pipe.native_source(), F_DUPFD_CLOEXEC, 0);
  } catch (const std::exception& e) {
    return fail(Error{ErrorCode::kFailed, spec.command.empty() ? spec.argv.front() : spec.command,
                      std::string("failed to start: ") + e.what()});
  }
  return std::unique_ptr<LineChild>(new LineChild(std::move(impl)));
}

Status LineChild::write_line(std::string_view line) {
  if (impl_->in_fd < 0) return fail(io_error("bench stdin", "already closed"));
  std::string data(line);
  data.push_back('\n');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(impl_->in_fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(io_error("bench stdin", std::string("write failed: ") + std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

void LineChild::close_stdin() {
  if (impl_->in_fd >= 0) {
    ::close(impl_->in_fd);
    impl_->in_fd = -1;
  }
}

LineChild::Read LineChild::read_line(std::string* line, Clock::time_point deadline, size_t max_line_bytes) {
  Impl& s = *impl_;
  for (;;) {
    auto newline = s.buffer.find('\n');
    if (newline != std::string::npos) {
      line->assign(s.buffer, 0, newline);
      s.buffer.erase(0, newline + 1);
      if (line->size() > max_line_bytes) return Read::kTooLong;
      return Read::kLine;
    }
    if (s.buffer.size() > max_line_bytes) {
      *line = s.buffer.substr(0, 256);
      s.buffer.clear();
      return Read::kTooLong;
    }
    if (s.eof) {
      if (s.buffer.empty()) return Read::kEof;
      // A last line without its newline still counts: the child may have died mid-write.
      *line = std::move(s.buffer);
      s.buffer.clear();
      return Read::kLine;
    }
    auto now = Clock::now();
    if (now >= deadline) return Read::kTimeout;
    auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfd{s.out_fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(wait_ms + 1, 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      s.eof = true;
      continue;
    }
    if (ready == 0) continue;
    char buf[65536];
    ssize_t got = ::read(s.out_fd, buf, sizeof buf);
    if (got > 0) {
      s.buffer.append(buf, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      s.eof = true;
    }
  }
}

ProcessResult LineChild::wait(Clock::time_point deadline) {
  ProcessResult r;
  close_stdin();
  wait_child(impl_->child, impl_->group, impl_->start, deadline, &r);
  r.tail = file_tail(impl_->stderr_log, 8192);
  return r;
}

void LineChild::kill() {
  std::error_code ec;
  impl_->group.terminate(ec);
}

int LineChild::pid() const { return impl_->child.id(); }

}  // namespace perfwatch::runner
