#include "web/connections.h"
#include "web/fair_queue.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace perfwatch::web {

namespace {

using Clock = std::chrono::steady_clock;

// A request head is at most this long; one that is not complete by then
// is handed to httplib anyway, which refuses it (414, 400).
constexpr std::size_t kMaxHead = 32 * 1024;
// What a chunked body's framing may add to max_body_bytes.
constexpr std::size_t kFramingAllowance = 16 * 1024;
// Requests that may wait for a lane's worker, per worker.
constexpr std::size_t kWaitingPerWorker = 16;
// The API workers' CPU priority below the rest of the server (nice
// levels): when the cores are saturated, the thread that reads request
// heads and the /healthz workers run first.
constexpr int kApiWorkerNice = 5;
// How often blocked reads and writes look at the stop flag, and how often
// the watcher looks at deadlines.
constexpr int kTickMs = 100;

// An owned socket.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// What the watcher reads off a request's head to route it.
struct Head {
  std::size_t length = 0;  // bytes up to and including the blank line
  bool health = false;     // GET /healthz
  bool has_body = false;   // Content-Length > 0 or any Transfer-Encoding
};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The head at the start of `buffer`, if it is complete (or too long to wait for).
std::optional<Head> find_head(const std::string& buffer) {
  auto end = buffer.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (buffer.size() < kMaxHead) return std::nullopt;
    Head h;
    h.length = buffer.size();
    h.has_body = true;  // unknown: the connection ends after httplib's answer
    return h;
  }
  Head h;
  h.length = end + 4;
  auto line_end = buffer.find("\r\n");
  std::string line = buffer.substr(0, line_end);
  h.health = line.rfind("GET /healthz ", 0) == 0 || line.rfind("GET /healthz?", 0) == 0;
  std::string headers = lower(buffer.substr(line_end, end - line_end + 2));
  for (std::size_t at = 0; (at = headers.find("\r\n", at)) != std::string::npos && at + 2 < headers.size(); at += 2) {
    auto colon = headers.find(':', at + 2);
    auto next = headers.find("\r\n", at + 2);
    if (colon == std::string::npos || colon > next) continue;
    std::string name = headers.substr(at + 2, colon - at - 2);
    std::string value = headers.substr(colon + 1, next - colon - 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (name == "transfer-encoding") h.has_body = true;
    if (name == "content-length" && value.find_first_not_of("0 \t") != std::string::npos) h.has_body = true;
  }
  return h;
}

// The answer to a connection over the limit, written before closing it.
const std::string& busy_answer() {
  static const std::string answer = [] {
    std::string body =
        R"({"schema_version":2,"error":{"code":"busy","field":"","message":"the server is busy; retry in a second"}})";
    return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
           "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }();
  return answer;
}

// Best effort, never blocking: a socket whose request head was read has room.
void send_busy(int fd) {
  const auto& busy = busy_answer();
  [[maybe_unused]] auto n = ::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// One client connection. Owned by exactly one of: the watcher (waiting for
// a request head), a lane's queue, or a worker (being served).
struct Conn {
  Socket socket;
  std::string peer;  // remote address, without the port: the fairness key
  int peer_port = 0;
  std::string buffer;  // bytes read off the socket...
  std::size_t pos = 0; // ...of which httplib has consumed these (0 while the watcher holds it)
  int served = 0;      // requests answered on this connection
  Clock::time_point idle_since;
  std::optional<Clock::time_point> first_byte;  // of the request being read
  std::atomic<int>* open;

  Conn(int fd, std::atomic<int>* open_count) : socket(fd), open(open_count) { open->fetch_add(1); }
  ~Conn() { open->fetch_sub(1); }
};

// httplib reads one request through this: first the bytes the watcher has
// buffered, then the socket, never past the request's deadline or its body
// limit, and never waiting past a stop.
class ConnStream : public httplib::Stream {
 public:
  ConnStream(Conn& c, const ConnectionLimits& limits, std::size_t head_length, const std::atomic<bool>& stopping)
      : c_(c), limits_(limits), stopping_(stopping),
        read_deadline_(c.first_byte.value_or(Clock::now()) + std::chrono::seconds(limits.request_timeout_s)),
        read_cap_(head_length + limits.max_body_bytes + kFramingAllowance) {}

  bool is_readable() const override { return c_.pos < c_.buffer.size(); }
  bool is_writable() const override { return wait(POLLOUT, write_deadline()); }

  ssize_t read(char* ptr, size_t size) override {
    if (consumed_ >= read_cap_) return -1;  // the body limit, whatever its encoding
    size = std::min(size, read_cap_ - consumed_);
    if (c_.pos == c_.buffer.size() && !fill()) return failed_ ? -1 : 0;
    size = std::min(size, c_.buffer.size() - c_.pos);
    std::memcpy(ptr, c_.buffer.data() + c_.pos, size);
    c_.pos += size;
    consumed_ += size;
    return static_cast<ssize_t>(size);
  }

  ssize_t write(const char* ptr, size_t size) override {
    auto deadline = write_deadline();
    size_t done = 0;
    while (done < size) {
      auto n = ::send(c_.socket.fd(), ptr + done, size - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (!wait(POLLOUT, deadline)) return -1;
      } else {
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = c_.peer;
    port = c_.peer_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    ip.clear();
    port = 0;
    if (getsockname(c_.socket.fd(), reinterpret_cast<sockaddr*>(&a), &len) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      auto* v4 = reinterpret_cast<sockaddr_in*>(&a);
      inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
      port = ntohs(v4->sin_port);
    } else if (a.ss_family == AF_INET6) {
      auto* v6 = reinterpret_cast<sockaddr_in6*>(&a);
      inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
      port = ntohs(v6->sin6_port);
    }
    ip = text;
  }
  // httplib 0.11.4 asks for the socket only to refuse descriptors that
  // select() cannot watch (>= FD_SETSIZE, answered 500). This stream never
  // uses select(), so it reports none.
  socket_t socket() const override { return INVALID_SOCKET; }

 private:
  Clock::time_point write_deadline() const {
    if (!write_started_) {
      write_started_ = Clock::now() + std::chrono::seconds(limits_.write_timeout_s);
    }
    return *write_started_;
  }

  // Waits for `events` until `deadline` (and at most read_timeout_s without
  // progress when reading); false on timeout, error or stop.
  bool wait(short events, Clock::time_point deadline) const {
    auto idle_until = Clock::now() + std::chrono::seconds(limits_.read_timeout_s);
    if (events == POLLIN) deadline = std::min(deadline, idle_until);
    for (;;) {
      if (stopping_) return false;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{c_.socket.fd(), events, 0};
      int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, kTickMs)));
      if (rc > 0) return true;  // ready, or an error the next call reports
      if (rc < 0 && errno != EINTR) return false;
    }
  }

  // Reads what the socket has into the buffer; false at end of stream or on
  // failure (failed_ says which).
  bool fill() {
    char chunk[16 * 1024];
    for (;;) {
      auto n = ::recv(c_.socket.fd(), chunk, sizeof chunk, 0);
      if (n > 0) {
        c_.buffer.erase(0, c_.pos);
        c_.pos = 0;
        c_.buffer.append(chunk, static_cast<size_t>(n));
        return true;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait(POLLIN, read_deadline_)) continue;
      failed_ = true;
      return false;
    }
  }

  Conn& c_;
  const ConnectionLimits& limits_;
  const std::atomic<bool>& stopping_;
  Clock::time_point read_deadline_;
  std::size_t read_cap_;
  std::size_t consumed_ = 0;
  bool failed_ = false;
  mutable std::optional<Clock::time_point> write_started_;
};

// Connections ready to be served, and the threads that serve them.
// `fair`: served by remote address in turn (round robin over clients),
// else first come first served.
class Lane {
 public:
  using Serve = std::function<void(std::unique_ptr<Conn>, Head)>;

  // `fair`: served by client in turn; `bounded`: at most kWaitingPerWorker
  // requests per worker wait (else only the connection limit bounds them);
  // `nice`: how much lower than the process the workers' CPU priority is.
  Lane(int workers, bool fair, bool bounded, int nice, Serve serve)
      : fair_(fair),
        max_waiting_(bounded ? static_cast<std::size_t>(workers) * kWaitingPerWorker : SIZE_MAX),
        serve_(std::move(serve)) {
    for (int i = 0; i < workers; ++i)
      threads_.emplace_back([this, nice] {
        if (nice > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), getpriority(PRIO_PROCESS, 0) + nice);
        work();
      });
  }
  ~Lane() { stop(); }

  // False when the lane is stopped or full (then `c` has been answered 503
  // and closed).
  bool push(std::unique_ptr<Conn> c, Head h) {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return false;  // c closes here
      if (waiting_.size() >= max_waiting_) {
        send_busy(c->socket.fd());
        return false;
      }
      std::string client = fair_ ? c->peer : std::string();
      waiting_.push(client, Item{std::move(c), h});
    }
    ready_.notify_one();
    return true;
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
      waiting_.clear();
    }
    ready_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  struct Item {
    std::unique_ptr<Conn> conn;
    Head head;
  };

  void work() {
    for (;;) {
      Item item;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopped_ || !waiting_.empty(); });
        if (stopped_) return;
        item = std::move(*waiting_.pop());
      }
      serve_(std::move(item.conn), item.head);
    }
  }

  bool fair_;
  std::size_t max_waiting_;
  Serve serve_;
  std::mutex mutex_;
  std::condition_variable ready_;
  FairQueue<Item> waiting_;  // one client (""), first come first served, when not fair
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

struct Connections::Impl {
  ConnectionLimits limits;
  ServeOne serve_one;
  std::atomic<int> open{0};
  std::atomic<bool> stopping{false};
  int epoll_fd = -1;
  int wake_fd = -1;  // eventfd: something is in `incoming`

  std::mutex incoming_mutex;
  std::vector<std::unique_ptr<Conn>> incoming;  // new, or back from a worker

  // Watcher-only state.
  std::map<int, std::unique_ptr<Conn>> waiting;  // by fd

  std::unique_ptr<Lane> api_lane, health_lane;
  std::thread watcher;
  std::mutex stop_mutex;
  bool stopped = false;

  void hand_to_watcher(std::unique_ptr<Conn> c) {
    {
      std::lock_guard lock(incoming_mutex);
      if (stopping) return;  // c closes here
      incoming.push_back(std::move(c));
    }
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }

  // On a worker: one request, then the connection goes back to the watcher
  // (keep-alive) or closes.
  void serve(std::unique_ptr<Conn> c, Head head) {
    // A client that gave up while its request waited (closed, or reset) is
    // not served: under overload that work would go to nobody.
    pollfd p{c->socket.fd(), POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return;  // c closes here
    bool last = head.has_body || c->served + 1 >= limits.keep_alive_max || stopping;
    bool connection_closed = false;
    bool ok;
    {
      ConnStream stream(*c, limits, head.length, stopping);
      ok = serve_one(stream, last, connection_closed);
    }
    c->served++;
    c->buffer.erase(0, c->pos);  // what is left belongs to the next request
    c->pos = 0;
    if (!ok || connection_closed || last) return;  // c closes here
    c->first_byte.reset();
    c->idle_since = Clock::now();
    hand_to_watcher(std::move(c));
  }

  // The watcher: takes in new and returned connections, reads request
  // heads, dispatches complete ones, closes those past their deadlines.
  void watch() {
    std::vector<epoll_event> events(256);
    auto last_expiry = Clock::now();
    while (!stopping) {
      int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), kTickMs);
      auto now = Clock::now();
      for (int i = 0; i < n; ++i) {
        int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == wake_fd) {
          std::uint64_t count;
          [[maybe_unused]] auto r = ::read(wake_fd, &count, sizeof count);
          continue;
        }
        auto it = waiting.find(fd);
        if (it != waiting.end()) readable(it, now);
      }
      take_incoming(now);
      if (now - last_expiry >= std::chrono::milliseconds(kTickMs)) {
        expire(now);
        last_expiry = now;
      }
    }
  }

  void take_incoming(Clock::time_point now) {
    std::vector<std::unique_ptr<Conn>> batch;
    {
      std::lock_guard lock(incoming_mutex);
      batch.swap(incoming);
    }
    for (auto& c : batch) {
      // Pipelined: the next head may already be in the buffer.
      if (!c->buffer.empty() && !c->first_byte) c->first_byte = now;
      if (auto head = find_head(c->buffer)) {
        dispatch(std::move(c), *head);
        continue;
      }
      int fd = c->socket.fd();
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) continue;  // c closes here
      waiting.emplace(fd, std::move(c));
    }
  }

  void readable(std::map<int, std::unique_ptr<Conn>>::iterator it, Clock::time_point now) {
    Conn& c = *it->second;
    char chunk[16 * 1024];
    for (;;) {
      if (c.buffer.size() >= kMaxHead) break;
      auto n = ::recv(c.socket.fd(), chunk, std::min(sizeof chunk, kMaxHead - c.buffer.size()), 0);
      if (n > 0) {
        if (!c.first_byte) c.first_byte = now;
        c.buffer.append(chunk, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n < 0 && errno == EINTR) continue;
      return forget(it);  // closed by the client, or failed
    }
    if (auto head = find_head(c.buffer)) {
      auto conn = std::move(it->second);
      forget(it);
      dispatch(std::move(conn), *head);
    }
  }

  void forget(std::map<int, std::unique_ptr<Conn>>::iterator it) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->first, nullptr);
    waiting.erase(it);
  }

  // A request beyond the lane's bound is answered 503 at once: a client
  // told to come back is better off than one whose request would wait
  // longer than it will (and the server than doing work for a client that
  // has gone).
  void dispatch(std::unique_ptr<Conn> c, const Head& head) {
    Lane& lane = head.health ? *health_lane : *api_lane;
    if (!lane.push(std::move(c), head)) return;
  }

  // Idle past the keep-alive timeout, or a request's head not complete
  // within the request deadline: closed.
  void expire(Clock::time_point now) {
    auto keep_alive = std::chrono::seconds(limits.keep_alive_timeout_s);
    auto request = std::chrono::seconds(limits.request_timeout_s);
    for (auto it = waiting.begin(); it != waiting.end();) {
      const Conn& c = *it->second;
      bool expired = c.first_byte ? now - *c.first_byte > request : now - c.idle_since > keep_alive;
      if (expired) {
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->first, nullptr);
        it = waiting.erase(it);
      } else {
        ++it;
      }
    }
  }
};

Connections::Connections(const ConnectionLimits& limits, ServeOne serve) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.limits = limits;
  s.serve_one = std::move(serve);
  s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  s.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = s.wake_fd;
  epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.wake_fd, &ev);
  auto serve_on = [&s](std::unique_ptr<Conn> c, Head h) { s.serve(std::move(c), h); };
  s.api_lane = std::make_unique<Lane>(limits.api_workers, true, true, kApiWorkerNice, serve_on);
  // /healthz answers in microseconds: its queue drains faster than it fills.
  s.health_lane = std::make_unique<Lane>(limits.health_workers, false, false, 0, serve_on);
  s.watcher = std::thread([&s] { s.watch(); });
}

Connections::~Connections() {
  stop();
  ::close(impl_->epoll_fd);
  ::close(impl_->wake_fd);
}

void Connections::adopt(int fd) {
  Impl& s = *impl_;
  if (s.stopping || s.open.load() >= s.limits.max_connections) {
    // Best effort: a fresh socket's send buffer takes this at once.
    send_busy(fd);
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
    return;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto c = std::make_unique<Conn>(fd, &s.open);
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      auto* v4 = reinterpret_cast<sockaddr_in*>(&a);
      inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
      c->peer_port = ntohs(v4->sin_port);
    } else if (a.ss_family == AF_INET6) {
      auto* v6 = reinterpret_cast<sockaddr_in6*>(&a);
      inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
      c->peer_port = ntohs(v6->sin6_port);
    }
    c->peer = text;
  }
  c->idle_since = Clock::now();
  s.hand_to_watcher(std::move(c));
}

void Connections::stop() {
  Impl& s = *impl_;
  std::lock_guard lock(s.stop_mutex);
  if (s.stopped) return;
  s.stopped = true;
  {
    std::lock_guard in(s.incoming_mutex);
    s.stopping = true;
    s.incoming.clear();
  }
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(s.wake_fd, &one, sizeof one);
  if (s.watcher.joinable()) s.watcher.join();
  s.waiting.clear();
  s.api_lane->stop();
  s.health_lane->stop();
}

int Connections::open_connections() const { return impl_->open.load(); }

}  // namespace perfwatch::web
