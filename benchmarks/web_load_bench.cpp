// web_load_bench: the web server under many concurrent clients -- requests
// per second and latency percentiles of the history route and of /healthz
// at 10, 100 and 1,000 connections.
//
// Fills the web benchmarks' database (benchmarks/history_fixture.h: 1000
// commits, 1,000,000 trials), starts web::Server in a child process
// (read-only, as `perfwatch serve`; the per-client rate limit lifted, since
// every connection here comes from 127.0.0.1), and drives it from one
// thread with non-blocking sockets on 127.0.0.1 only. Per load level N:
//
//   history: N keep-alive connections each asking GET /api/v1/history
//            (the chart's default, limit=200, rotating over the points) as
//            soon as the previous answer is in, while one more connection
//            asks GET /healthz every 20 ms (what a liveness probe sees when
//            the API is saturated);
//   healthz: N connections asking GET /healthz back to back.
//
// A request's latency runs from the moment it could be sent (for a new
// connection: from connect(), so a full listen backlog shows) to the last
// byte of its answer. A request unanswered after --timeout-s counts as a
// timeout and its connection is replaced; one answered 503 with
// Retry-After (the server shedding load) counts as non-200 and its client
// comes back on a new connection after that many seconds. Each level runs --warmup-s, then
// is measured for --seconds; everything is bounded and the program stops by
// itself.
//
//   web_load_bench [--db FILE] [--reuse] [--seconds S] [--warmup-s S] [--timeout-s S]
//                  [--connections 10,100,1000] [--limit N] [--commits N] [--points P]
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "history_fixture.h"
#include "web/server.h"

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

struct Options {
  fs::path db;
  bool reuse = false;
  double seconds = 8;
  double warmup_s = 2;
  double timeout_s = 5;
  std::vector<int> connections = {10, 100, 1000};
  int limit = 200;
  int commits = 1000;
  int points = 50;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "web_load_bench: %s\n", what.c_str());
  std::exit(1);
}

double number(const std::string& flag, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end || !(v >= lo && v <= hi))
    die(flag + ": must be a number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + ": needs a value");
      return argv[++i];
    };
    if (a == "--db") o.db = value();
    else if (a == "--reuse") o.reuse = true;
    else if (a == "--seconds") o.seconds = number(a, value(), 0.1, 600);
    else if (a == "--warmup-s") o.warmup_s = number(a, value(), 0, 600);
    else if (a == "--timeout-s") o.timeout_s = number(a, value(), 0.1, 600);
    else if (a == "--limit") o.limit = static_cast<int>(number(a, value(), 1, 5000));
    else if (a == "--commits") o.commits = static_cast<int>(number(a, value(), 2, 100000));
    else if (a == "--points") o.points = static_cast<int>(number(a, value(), 1, 1000));
    else if (a == "--connections") {
      o.connections.clear();
      std::string list = value();
      for (std::size_t at = 0; at <= list.size();) {
        auto comma = list.find(',', at);
        if (comma == std::string::npos) comma = list.size();
        o.connections.push_back(static_cast<int>(number(a, list.substr(at, comma - at), 1, 5000)));
        at = comma + 1;
      }
    } else die("unknown argument " + a);
  }
  if (o.db.empty()) o.db = fs::temp_directory_path() / ("web_load_bench_" + std::to_string(getpid()) + ".db");
  return o;
}

double ms_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// What one kind of request got during the measured window.
struct Tally {
  std::vector<double> ms;  // answered 200
  long long other_status = 0, timeouts = 0, failed = 0;
  long long pending = 0;         // still unanswered when the window closed...
  double oldest_pending_ms = 0;  // ...the oldest of them waiting this long

  double at(double q) {
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1) + 0.5))];
  }
};

// One client connection: a state machine driven by epoll.
struct Connection {
  int fd = -1;
  bool connecting = false;
  bool probe = false;  // the /healthz probe: one request every 20 ms
  std::string path;
  std::string out;
  std::size_t sent = 0;
  std::string in;
  Clock::time_point started;     // when the current request could be sent
  Clock::time_point next_at;     // probe: when to send the next one
  bool waiting = false;          // idle until next_at (the probe's pace, or Retry-After)
  bool reconnect = false;        // ...then on a new connection
};

// The length of a complete response at the start of `in`, or 0; *status
// and *close are read from its head.
std::size_t complete_response(const std::string& in, int* status, bool* close) {
  auto head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return 0;
  std::string head = in.substr(0, head_end);
  for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  *status = head.size() > 12 ? std::atoi(head.c_str() + 9) : 0;
  *close = head.find("\r\nconnection: close") != std::string::npos;
  auto at = head.find("\r\ncontent-length:");
  std::size_t length = at == std::string::npos ? 0 : std::strtoul(head.c_str() + at + 17, nullptr, 10);
  return in.size() >= head_end + 4 + length ? head_end + 4 + length : 0;
}

// The value of header `name` (lower case) in the response head at the start of `in`.
std::string header_value(const std::string& in, const std::string& name) {
  std::string head = in.substr(0, in.find("\r\n\r\n"));
  for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto at = head.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  auto from = at + 3 + name.size();
  return head.substr(from, head.find("\r\n", from) - from);
}

class Load {
 public:
  Load(int port, double timeout_s) : port_(port), timeout_s_(timeout_s), ep_(epoll_create1(EPOLL_CLOEXEC)) {
    if (ep_ < 0) die("epoll_create1: " + std::string(std::strerror(errno)));
  }
  ~Load() {
    for (auto& c : conns_)
      if (c.fd >= 0) ::close(c.fd);
    ::close(ep_);
  }

  void add(const std::string& path, bool probe) {
    conns_.push_back(Connection{});
    conns_.back().path = path;
    conns_.back().probe = probe;
  }

  // Runs for warmup_s, then measures for seconds; *main gets the non-probe
  // requests, *probe the probe's.
  void run(double warmup_s, double seconds, Tally* main, Tally* probe, std::vector<std::string>* paths) {
    paths_ = paths;
    auto t0 = Clock::now();
    measure_from_ = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup_s));
    auto end = measure_from_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    main_ = main;
    probe_ = probe;
    for (std::size_t i = 0; i < conns_.size(); ++i) open(i, Clock::now());
    std::vector<epoll_event> events(1024);
    while (Clock::now() < end) {
      int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), 5);
      auto now = Clock::now();
      for (int k = 0; k < n; ++k) step(events[k].data.u32, events[k].events, now);
      // Timeouts and the probe's schedule.
      for (std::size_t i = 0; i < conns_.size(); ++i) {
        auto& c = conns_[i];
        if (c.waiting) {
          if (now < c.next_at) continue;
          if (c.reconnect) {
            c.reconnect = false;
            open(i, now);
          } else {
            send_request(i, now);
          }
        } else if (ms_since(c.started, now) > timeout_s_ * 1e3) {
          if (measuring(c.started)) count(c, now).timeouts++;
          open(i, now);
        }
      }
    }
    // Requests still waiting at the end: not in the percentiles, which
    // would otherwise look better the longer the server makes them wait.
    auto now = Clock::now();
    for (auto& c : conns_) {
      if (c.waiting) continue;  // not asking now (paced, or told to come back)
      auto& t = count(c, now);
      t.pending++;
      t.oldest_pending_ms = std::max(t.oldest_pending_ms, ms_since(c.started, now));
    }
  }

 private:
  Tally& count(const Connection& c, Clock::time_point) { return c.probe ? *probe_ : *main_; }
  bool measuring(Clock::time_point t) const { return t >= measure_from_; }

  void open(std::size_t i, Clock::time_point now) {
    auto& c = conns_[i];
    if (c.fd >= 0) ::close(c.fd);
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0) die("socket: " + std::string(std::strerror(errno)) + " (raise ulimit -n?)");
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c.started = now;
    c.in.clear();
    c.waiting = false;
    int rc = ::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (rc < 0 && errno != EINPROGRESS) die("connect: " + std::string(std::strerror(errno)));
    c.connecting = true;
    epoll_event ev{};
    ev.events = EPOLLOUT | EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev);
    prepare(c);
  }

  void prepare(Connection& c) {
    std::string path = c.path;
    if (path.empty() && paths_ && !paths_->empty()) path = (*paths_)[rotation_++ % paths_->size()];
    c.out = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    c.sent = 0;
  }

  void send_request(std::size_t i, Clock::time_point now) {
    auto& c = conns_[i];
    c.waiting = false;
    c.started = now;
    prepare(c);
    flush(i);
  }

  void flush(std::size_t i) {
    auto& c = conns_[i];
    while (c.sent < c.out.size()) {
      auto n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0) return;  // EAGAIN: epoll says when; errors show as a read error
      c.sent += static_cast<std::size_t>(n);
    }
  }

  void step(std::size_t i, uint32_t events, Clock::time_point now) {
    auto& c = conns_[i];
    if (c.connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err) {
        if (measuring(now)) count(c, now).failed++;
        return open(i, now);
      }
      c.connecting = false;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = static_cast<uint32_t>(i);
      epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
      flush(i);
    }
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
    char buf[65536];
    for (;;) {
      auto n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      // Closed or reset before the answer was complete.
      int status = 0;
      bool close = false;
      if (!complete_response(c.in, &status, &close)) {
        if (measuring(now)) count(c, now).failed++;
        return open(i, now);
      }
      break;
    }
    int status = 0;
    bool close = false;
    std::size_t length = complete_response(c.in, &status, &close);
    if (!length) return;
    if (measuring(c.started)) {
      auto& t = count(c, now);
      if (status == 200) t.ms.push_back(ms_since(c.started, now));
      else t.other_status++;
    }
    // A client told to come back later (503 with Retry-After) does so, as a
    // well-behaved one would, rather than hammering the server at once.
    int retry_after = status == 503 ? std::atoi(header_value(c.in, "retry-after").c_str()) : 0;
    c.in.erase(0, length);
    if (retry_after > 0) {
      if (c.fd >= 0) {
        epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
        ::close(c.fd);
        c.fd = -1;
      }
      c.waiting = true;
      c.reconnect = true;
      c.next_at = now + std::chrono::seconds(retry_after);
      return;
    }
    if (close) return open(i, now);
    if (c.probe) {
      c.waiting = true;
      c.next_at = now + std::chrono::milliseconds(20);
    } else {
      send_request(i, now);
    }
  }

  int port_;
  double timeout_s_;
  int ep_;
  std::vector<Connection> conns_;
  std::vector<std::string>* paths_ = nullptr;
  std::size_t rotation_ = 0;
  Clock::time_point measure_from_;
  Tally* main_ = nullptr;
  Tally* probe_ = nullptr;
};

// The server in a child process (its own descriptors, its own threads);
// it stops when the pipe from the parent closes.
struct ServerProcess {
  pid_t pid = -1;
  int stop_fd = -1;
  int port = 0;

  explicit ServerProcess(const fs::path& db) {
    int port_pipe[2], stop_pipe[2];
    if (pipe(port_pipe) || pipe(stop_pipe)) die("pipe failed");
    pid = fork();
    if (pid < 0) die("fork failed");
    if (pid == 0) {
      ::close(port_pipe[0]);
      ::close(stop_pipe[1]);
      perfwatch::web::ServerOptions so;
      so.db = db;
      so.port = 0;
      so.read_only = true;
      // Every connection comes from 127.0.0.1: the per-client limit would
      // answer 429 to almost all of them. This measures the server itself.
      so.limits.expensive_burst = 1e9;
      so.limits.expensive_per_s = 1e9;
      auto server = perfwatch::web::Server::start(so);
      int p = server ? (*server)->port() : -1;
      if (!server) std::fprintf(stderr, "web_load_bench: server: %s\n", server.error().to_string().c_str());
      if (write(port_pipe[1], &p, sizeof p) != sizeof p) _exit(1);
      char c;
      while (read(stop_pipe[0], &c, 1) > 0) {
      }
      if (server) (*server)->stop();
      _exit(0);
    }
    ::close(port_pipe[1]);
    ::close(stop_pipe[0]);
    stop_fd = stop_pipe[1];
    if (read(port_pipe[0], &port, sizeof port) != sizeof port || port <= 0) die("the server did not start");
    ::close(port_pipe[0]);
  }
  ~ServerProcess() {
    ::close(stop_fd);
    int status = 0;
    waitpid(pid, &status, 0);
  }
};

void raise_descriptor_limit(std::size_t needed) {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur >= needed) return;
  r.rlim_cur = std::min<rlim_t>(r.rlim_max, needed);
  setrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur < needed) die("needs " + std::to_string(needed) + " file descriptors; the hard limit is " + std::to_string(r.rlim_max));
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  int most = *std::max_element(o.connections.begin(), o.connections.end());
  // The client's sockets here, the server's in the child (which inherits the limit).
  raise_descriptor_limit(static_cast<std::size_t>(most) + 256);

  if (!o.reuse) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(o.db.string() + suffix, ec);
    auto t0 = Clock::now();
    auto info = perfwatch::web::testing::build_fixture(o.db, perfwatch::benchmarks::history_fixture_spec(o.commits, o.points));
    if (!info) die(info.error().to_string());
    std::fprintf(stderr, "filled %s: %lld trials in %.1f s\n", o.db.c_str(), static_cast<long long>(info->trials),
                 std::chrono::duration<double>(Clock::now() - t0).count());
  }

  ServerProcess server(o.db);
  std::vector<std::string> history_paths;
  {
    httplib::Client client("127.0.0.1", server.port);
    client.set_read_timeout(30, 0);
    auto series = client.Get("/api/v1/series");
    if (!series || series->status != 200) die("/api/v1/series failed");
    auto doc = nlohmann::json::parse(series->body);
    std::string variant = doc["variants"][0]["name"];
    for (const auto& p : doc["points"])
      history_paths.push_back("/api/v1/history?variant=" + variant + "&point=" + perfwatch::benchmarks::query_value(p["key"].get<std::string>()) +
                              "&limit=" + std::to_string(o.limit));
  }

  std::printf("web_load_bench: %d commits x 2 runs x 2 variants x %d points x 5 trials; history limit=%d;\n"
              "%.1f s warm-up, %.1f s measured per row; timeout %.0f s. ms: from when a request could be sent\n"
              "(connect() for a new connection) to the last byte of its answer.\n\n",
              o.commits, o.points, o.limit, o.warmup_s, o.seconds, o.timeout_s);
  std::printf("| conns | load    | route    |   req/s |   p50 ms |   p99 ms |   max ms | non-200 | timeouts | failed | unanswered at end (oldest ms) |\n");
  std::printf("|------:|---------|----------|--------:|---------:|---------:|---------:|--------:|---------:|-------:|------------------------------:|\n");
  auto row = [&](int n, const char* load, const char* route, Tally& t) {
    double p50 = t.at(0.5), p99 = t.at(0.99), max = t.ms.empty() ? 0 : t.ms.back();
    std::printf("| %5d | %-7s | %-8s | %7.0f | %8.2f | %8.2f | %8.2f | %7lld | %8lld | %6lld | %18lld (%8.0f) |\n", n,
                load, route, static_cast<double>(t.ms.size()) / o.seconds, p50, p99, max, t.other_status, t.timeouts,
                t.failed, t.pending, t.oldest_pending_ms);
    std::fflush(stdout);
  };
  for (int n : o.connections) {
    {
      Load load(server.port, o.timeout_s);
      for (int i = 0; i < n; ++i) load.add("", false);
      load.add("/healthz", true);
      Tally history, probe;
      load.run(o.warmup_s, o.seconds, &history, &probe, &history_paths);
      row(n, "history", "history", history);
      row(n, "history", "/healthz", probe);
    }
    {
      Load load(server.port, o.timeout_s);
      for (int i = 0; i < n; ++i) load.add("/healthz", false);
      Tally healthz, unused;
      load.run(o.warmup_s, o.seconds, &healthz, &unused, nullptr);
      row(n, "healthz", "/healthz", healthz);
    }
  }
  return 0;
}
