#include "runner/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>
#include <utility>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>

#include "runner/capped_log.h"

namespace perfwatch::runner {

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kExited: return "exited";
    case Outcome::kSignalled: return "signalled";
    case Outcome::kTimedOut: return "timed_out";
    case Outcome::kStopped: return "stopped";
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
    case Outcome::kStopped: return "was stopped: perfwatch was asked to stop and ended its process group";
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
  // set(), not env[k]: Boost 1.74's find() behind operator[] compares the
  // key against each entry without minding the entry's length and reads past
  // the end of a shorter one (AddressSanitizer: heap-buffer-overflow).
  for (const auto& [k, v] : spec.env) env.set(k, v);
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
  // Nothing to run at all: the shell's no-op, never argv.front() of an empty list.
  if (argv.empty()) return {"/bin/sh", {"-c", ":"}};
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

// How long the pipes of a child that has exited are still read: output
// already written arrives at once; a grandchild holding the pipe is not waited for.
constexpr auto kDrain = std::chrono::milliseconds(200);
// How often a wait looks at the child, the clock and the stop flag.
constexpr int kTickMs = 100;

// In the child between fork and exec: die with the thread that started us.
// A parent that died before the prctl would never send the signal, hence the check.
struct DieWithParent : bp::extend::handler {
  pid_t parent = ::getpid();
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
  }
};

// In the child: the given descriptors (pipe ends, close-on-exec so that only
// the dup2'ed copies survive the exec) become its stdin (-1: left to
// bp::std_in), stdout and stderr.
struct StdioFrom : bp::extend::handler {
  int in = -1, out = -1, err = -1;
  StdioFrom(int in_, int out_, int err_) : in(in_), out(out_), err(err_) {}
  template <class Executor>
  void on_exec_setup(Executor& e) const {
    if ((in >= 0 && ::dup2(in, STDIN_FILENO) < 0) || ::dup2(out, STDOUT_FILENO) < 0 || ::dup2(err, STDERR_FILENO) < 0)
      e.set_error(std::error_code(errno, std::system_category()), "dup2() failed");
  }
};

// In the child: every descriptor above stderr is closed by the exec, whoever
// opened it (close_range's CLOSE_RANGE_CLOEXEC, else fcntl one by one: both
// safe between fork and exec). Benches start from several threads at once,
// one a GPU; without this a child could inherit another bench's stdin pipe,
// opened in this process while that bench was being started, and hold it
// open after perfwatch closed it: that bench would wait for its end of input
// and never write its footer. Close-on-exec rather than closed, so that
// Boost's own pipe that reports a failed exec still works (bp::limit_handles
// closes it in Boost 1.74, and a missing program then looks like exit code 1).
struct OnlyStdioSurvivesExec : bp::extend::handler {
  template <class Executor>
  void on_exec_setup(Executor&) const {
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
    const long max = ::sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
};

// Both ends of a pipe, closed by their owner.
struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::system_category(), "pipe2");
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    close_write();
    if (read >= 0) ::close(read);
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  // Hands an end over to a new owner.
  int release_read() { return std::exchange(read, -1); }
  int release_write() { return std::exchange(write, -1); }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
};

// A started child: the leader of its own group (bp::group makes its pid
// the group id), reported to the caller's watch as it starts and ends.
class Running {
 public:
  Running(const ChildWatch& watch, Clock::time_point start) : watch_(watch), start_(start) {}
  ~Running() { end(); }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;

  bp::child child;
  bp::group group;

  void started() {
    leader_.pid = child.id();
    leader_.start_ticks = start_ticks_of(leader_.pid).value_or(0);
    if (watch_.started) watch_.started(leader_);
  }
  bool stop_requested() const { return watch_.stop && watch_.stop->load(); }
  // Reaps the leader once it has exited; true while it runs.
  bool running() {
    std::error_code ec;
    if (!child.valid() || exited_) return false;
    if (child.running(ec)) return true;
    exited_ = true;
    exited_at_ = Clock::now();
    return false;
  }
  bool exited() { return !running(); }
  // True once the leader has exited and kDrain has passed since.
  bool drained() { return exited() && Clock::now() - exited_at_ >= kDrain; }

  // SIGTERM to the group; SIGKILL to what is left after `grace_s`. Reaps the leader.
  void end_group(double grace_s) {
    if (!child.valid() || group_ended_) return;
    const pid_t pgid = leader_.pid;
    ::kill(-pgid, SIGTERM);
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_s));
    // The group is empty once the leader is reaped and no member answers.
    while (Clock::now() < deadline && (running() || ::kill(-pgid, 0) == 0)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(-pgid, SIGKILL);
    if (!exited_) {
      std::error_code ec;
      child.wait(ec);
      exited_ = true;
      exited_at_ = Clock::now();
    }
    group_ended_ = true;
  }

  // The group is ended (grandchildren that outlive the leader would keep
  // pipes open or write into the worktree) and the watch told; idempotent.
  void end() {
    if (!child.valid() || reported_) return;
    end_group(running() ? watch_.stop_grace_s : 0.5);
    reported_ = true;
    if (watch_.ended) watch_.ended(leader_);
  }

  // Waits for the leader until the deadline or a stop, then ends its group.
  void wait(Clock::time_point deadline, ProcessResult* r) {
    while (running()) {
      if (Clock::now() >= deadline || stop_requested()) {
        r->outcome = stop_requested() ? Outcome::kStopped : Outcome::kTimedOut;
        r->signal = SIGKILL;
        end_group(watch_.stop_grace_s);
        r->wall_s = seconds_since(start_);
        end();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r->wall_s = std::chrono::duration<double>(exited_at_ - start_).count();
    decode_status(child.native_exit_code(), r);
    end();
  }

 private:
  const ChildWatch& watch_;
  Clock::time_point start_;
  ProcessIdentity leader_;
  Clock::time_point exited_at_{};
  bool exited_ = false;
  bool group_ended_ = false;
  bool reported_ = false;
};

// Reads `fds` into `sink` until each is closed, or the child has exited and
// they were drained, or the deadline passes, or a stop is asked for.
void pump(Running& run, int n, const int* fds, const std::function<void(int, const char*, std::size_t)>& sink,
          Clock::time_point deadline) {
  bool open[2] = {n > 0, n > 1};
  char buf[65536];
  while ((open[0] || open[1]) && Clock::now() < deadline && !run.stop_requested() && !run.drained()) {
    pollfd pfds[2];
    int which[2];
    int count = 0;
    for (int i = 0; i < n; ++i) {
      if (open[i]) {
        pfds[count] = {fds[i], POLLIN, 0};
        which[count++] = i;
      }
    }
    int ready = ::poll(pfds, static_cast<nfds_t>(count), run.exited() ? 20 : kTickMs);
    if (ready < 0 && errno != EINTR) break;
    for (int j = 0; j < count && ready > 0; ++j) {
      if (!(pfds[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(pfds[j].fd, buf, sizeof buf);
      if (got > 0) sink(which[j], buf, static_cast<std::size_t>(got));
      else if (got == 0 || errno != EINTR) open[which[j]] = false;
    }
  }
  // What is already in the pipes is kept (bounded: a grandchild may go on writing).
  for (int i = 0; i < n; ++i) {
    std::size_t taken = 0;
    pollfd ready{fds[i], POLLIN, 0};
    while (open[i] && taken < (8u << 20) && ::poll(&ready, 1, 0) > 0 && (ready.revents & POLLIN)) {
      ssize_t got = ::read(fds[i], buf, sizeof buf);
      if (got <= 0) break;
      sink(i, buf, static_cast<std::size_t>(got));
      taken += static_cast<std::size_t>(got);
    }
  }
}

}  // namespace

ProcessResult run_logged(const ProcessSpec& spec, const std::filesystem::path& log_path, size_t tail_bytes) {
  ProcessResult r;
  auto start = Clock::now();
  {
    CappedLog log(log_path, spec.log_cap_bytes, spec.log_cap_bytes);
    try {
      auto [exe, args] = program_of(spec);
      Pipe out;
      Running run(spec.watch, start);
      run.child = bp::child(bp::exe = exe, bp::args = args, bp::start_dir = workdir_of(spec).string(),
                            bp::env = make_env(spec), StdioFrom(-1, out.write, out.write), bp::std_in < bp::null,
                            OnlyStdioSurvivesExec{}, run.group, DieWithParent{});
      run.started();
      out.close_write();
      const int fds[1] = {out.read};
      auto deadline = deadline_after(spec.timeout_s);
      pump(run, 1, fds, [&](int, const char* data, std::size_t n) { log.write(data, n); }, deadline);
      run.wait(deadline, &r);
    } catch (const std::exception& e) {
      r.outcome = Outcome::kFailedToStart;
      r.start_error = e.what();
      r.wall_s = seconds_since(start);
    }
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
    Pipe out, err;
    Running run(spec.watch, start);
    run.child = bp::child(bp::exe = exe, bp::args = args, bp::start_dir = workdir_of(spec).string(),
                          bp::env = make_env(spec), StdioFrom(-1, out.write, err.write), bp::std_in < bp::null,
                          OnlyStdioSurvivesExec{}, run.group, DieWithParent{});
    run.started();
    out.close_write();
    err.close_write();
    // Drain both pipes together so that neither can fill up and stall the child.
    const int fds[2] = {out.read, err.read};
    std::string* sinks[2] = {&c.out, &c.result.tail};
    pump(run, 2, fds, [&](int i, const char* data, std::size_t n) { sinks[i]->append(data, n); }, deadline);
    run.wait(deadline, &c.result);
  } catch (const std::exception& e) {
    c.result.outcome = Outcome::kFailedToStart;
    c.result.start_error = e.what();
    c.result.wall_s = seconds_since(start);
  }
  if (c.result.tail.size() > 8192) c.result.tail = c.result.tail.substr(c.result.tail.size() - 8192);
  return c;
}

struct LineChild::Impl {
  ChildWatch watch;
  std::unique_ptr<Running> run;
  int in_fd = -1;    // our end of the child's stdin
  int out_fd = -1;   // our end of the child's stdout
  int err_fd = -1;   // our end of the child's stderr (non-blocking)
  std::string buffer;
  bool eof = false;
  Clock::time_point start;
  std::filesystem::path stderr_log;
  std::unique_ptr<CappedLog> log;

  ~Impl() {
    run.reset();  // ends the group, reports it
    if (in_fd >= 0) ::close(in_fd);
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
  }

  // Reads whatever stderr has now, without waiting.
  void read_stderr() {
    char buf[65536];
    while (err_fd >= 0) {
      ssize_t got = ::read(err_fd, buf, sizeof buf);
      if (got > 0) {
        log->write(buf, static_cast<std::size_t>(got));
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && errno == EAGAIN) return;
      ::close(err_fd);
      err_fd = -1;
    }
  }
};

LineChild::LineChild(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LineChild::~LineChild() = default;

Result<std::unique_ptr<LineChild>> LineChild::start(const ProcessSpec& spec, const std::filesystem::path& stderr_log) {
  std::signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->watch = spec.watch;
  impl->stderr_log = stderr_log;
  impl->start = Clock::now();
  impl->log = std::make_unique<CappedLog>(stderr_log, spec.log_cap_bytes, spec.log_cap_bytes);
  try {
    auto [exe, args] = program_of(spec);
    // Close-on-exec from birth (Pipe), and every child keeps only its stdio
    // (OnlyStdioSurvivesExec): no other bench holds this one's stdin open.
    Pipe in, out, err;
    impl->run = std::make_unique<Running>(impl->watch, impl->start);
    impl->run->child = bp::child(bp::exe = exe, bp::args = args, bp::start_dir = workdir_of(spec).string(),
                                 bp::env = make_env(spec), StdioFrom(in.read, out.write, err.write),
                                 OnlyStdioSurvivesExec{}, impl->run->group, DieWithParent{});
    impl->run->started();
    in.close_read();
    out.close_write();
    err.close_write();
    impl->in_fd = in.release_write();
    impl->out_fd = out.release_read();
    impl->err_fd = err.release_read();
    ::fcntl(impl->err_fd, F_SETFL, ::fcntl(impl->err_fd, F_GETFL) | O_NONBLOCK);
  } catch (const std::exception& e) {
    impl->run.reset();
    return fail(Error{ErrorCode::kFailed, spec.command.empty() ? (spec.argv.empty() ? std::string("(no command)") : spec.argv.front()) : spec.command,
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
    if (s.run->stop_requested()) return Read::kStopped;
    // The bench has exited and its stdout stayed quiet for the drain: a
    // grandchild holding the pipe open does not make it a hang.
    if (s.run->drained()) {
      // What the bench wrote before it exited is still read, however late we look.
      pollfd ready{s.out_fd, POLLIN, 0};
      if (::poll(&ready, 1, 0) > 0 && (ready.revents & POLLIN)) {
        char buf[65536];
        ssize_t got = ::read(s.out_fd, buf, sizeof buf);
        if (got > 0) {
          s.buffer.append(buf, static_cast<size_t>(got));
          continue;
        }
      }
      s.eof = true;
      continue;
    }
    auto now = Clock::now();
    if (now >= deadline) return Read::kTimeout;
    auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfds[2] = {{s.out_fd, POLLIN, 0}, {s.err_fd, POLLIN, 0}};
    int tick = s.run->exited() ? 20 : kTickMs;
    int ready = ::poll(pfds, s.err_fd >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(wait_ms + 1, tick)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      s.eof = true;
      continue;
    }
    if (ready == 0) continue;
    if (s.err_fd >= 0 && (pfds[1].revents & (POLLIN | POLLHUP | POLLERR))) s.read_stderr();
    if (!(pfds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
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
  Impl& s = *impl_;
  ProcessResult r;
  close_stdin();
  // Keep reading stderr while waiting: a bench blocked on a full stderr pipe never exits.
  if (s.err_fd >= 0) {
    const int fds[1] = {s.err_fd};
    pump(*s.run, 1, fds, [&](int, const char* data, std::size_t n) { s.log->write(data, n); }, deadline);
  }
  s.run->wait(deadline, &r);
  s.read_stderr();
  s.log->finish();
  r.tail = file_tail(s.stderr_log, 8192);
  return r;
}

void LineChild::kill() { impl_->run->end_group(impl_->watch.stop_grace_s); }

int LineChild::pid() const { return impl_->run->child.id(); }

}  // namespace perfwatch::runner
