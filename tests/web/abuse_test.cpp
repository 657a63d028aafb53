// HTTP under load and abuse: slow clients, held workers, idle and excess
// connections, oversized chunked bodies, a second server on the same port,
// and a flooding client -- none of them keeps the server from others.
//
// Each test holds the server in the state it is about (workers busy,
// connections open) with sockets it controls, then checks what another
// client gets. A wait that ends a test is a bound on a failure (a client
// timeout of seconds where the answer takes milliseconds), never a sleep
// that hopes something happened.
#include <fcntl.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "web_test_support.h"

namespace perfwatch::web::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kToken = "s3cret-token-for-abuse-tests";

// A client socket on loopback, from `source` (any 127.0.0.0/8 address is
// this machine: a second "client" for per-client limits).
class Client {
 public:
  explicit Client(int port, const char* source = "127.0.0.1") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }

  // Sends all of `data`; false once the server has closed or reset.
  bool send(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      auto n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One whole response, or what came before the server closed, or "" when
  // nothing came within `timeout_s` (the bound that fails a test).
  std::string response(double timeout_s = 5) {
    std::string out;
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    while (!response_complete(out)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char buf[4096];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

  // Whether the server closed this connection within `timeout_s`
  // (anything it wrote first is skipped).
  bool closed_within(double timeout_s) {
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
      char buf[4096];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::string get(const std::string& target, bool close = true) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n";
}

std::string header(const std::string& response, const std::string& name) {
  std::string head = response.substr(0, response.find("\r\n\r\n"));
  auto at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  auto from = at + 4 + name.size();
  return head.substr(from, head.find("\r\n", from) - from);
}

std::string ack_path(store::FlagId id) { return "/api/v1/flags/" + std::to_string(id) + "/acknowledge"; }

// The head of an acknowledgement whose body of `length` bytes is never
// (fully) sent: it holds one API worker while its body is awaited.
std::string held_post(store::FlagId flag, int length = 100) {
  return "POST " + ack_path(flag) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kToken +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n{";
}

class AbuseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { db_ = new FixtureDb(); }
  static void TearDownTestSuite() {
    delete db_;
    db_ = nullptr;
  }
  static ServerOptions options() {
    ServerOptions o;
    o.db = db_->path;
    o.token = kToken;  // writes enabled: the held bodies below are acknowledgements
    o.limits.expensive_burst = 1e6;
    return o;
  }
  static FixtureDb* db_;
};
FixtureDb* AbuseTest::db_ = nullptr;

TEST_F(AbuseTest, HealthzAnswersWhileEveryApiWorkerIsHeld) {
  ServerOptions o = options();
  o.limits.threads = 2;
  o.limits.read_timeout_s = 60;  // the held requests stay held for the whole test
  o.limits.request_timeout_s = 60;
  Running s(o);
  std::vector<std::unique_ptr<Client>> held;
  for (int i = 0; i < o.limits.threads; ++i) {
    held.push_back(std::make_unique<Client>(s.port()));
    ASSERT_TRUE(held.back()->send(held_post(db_->info.regression_flag)));
  }
  // Both API workers now wait for a body. An API request waits behind them...
  Client api(s.port());
  ASSERT_TRUE(api.send(get("/api/v1/repos")));
  // ...but a liveness probe does not.
  Client probe(s.port());
  ASSERT_TRUE(probe.send(get("/healthz")));
  std::string health = probe.response();
  EXPECT_EQ(raw_status(health), 200) << health.substr(0, 200);
  EXPECT_EQ(api.response(0.2), "");  // still queued: the workers really are held
  held.clear();                       // the clients go: their workers are free
  EXPECT_EQ(raw_status(api.response()), 200);
}

TEST_F(AbuseTest, SlowClientsHoldNoWorker) {
  ServerOptions o = options();
  o.limits.threads = 2;
  o.limits.read_timeout_s = 60;
  o.limits.request_timeout_s = 60;
  Running s(o);
  // Eight clients that have sent part of a request head and then go quiet
  // (as one sending a byte every 2 s looks between its bytes).
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 8; ++i) {
    slow.push_back(std::make_unique<Client>(s.port()));
    ASSERT_TRUE(slow.back()->send("GET /api/v1/repos HTTP/1.1\r\nHost: 127."));
  }
  Client other(s.port());
  ASSERT_TRUE(other.send(get("/api/v1/repos")));
  std::string r = other.response();
  EXPECT_EQ(raw_status(r), 200) << r.substr(0, 200);
}

TEST_F(AbuseTest, ATricklingRequestIsCutOffAtItsDeadline) {
  ServerOptions o = options();
  o.limits.request_timeout_s = 1;
  o.limits.read_timeout_s = 5;  // each byte comes well within this: only the request deadline ends it
  Running s(o);
  Client slow(s.port());
  std::string head = "GET /api/v1/repos HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + std::string(200, 'a') + "\r\n\r\n";
  auto start = Clock::now();
  bool cut_off = false;
  // A byte every 50 ms: the whole head would take 12 s.
  for (char c : head) {
    if (!slow.send(std::string(1, c)) || slow.closed_within(0.05)) {
      cut_off = true;
      break;
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_TRUE(cut_off) << "the server waited for the whole trickled head (" << seconds << " s)";
  EXPECT_GE(seconds, 0.9);  // not before its deadline
}

TEST_F(AbuseTest, IdleConnectionsCloseAfterTheKeepAliveTimeout) {
  ServerOptions o = options();
  o.limits.keep_alive_timeout_s = 1;
  Running s(o);
  Client c(s.port());
  ASSERT_TRUE(c.send(get("/healthz", /*close=*/false)));
  std::string r = c.response();
  EXPECT_EQ(raw_status(r), 200);
  EXPECT_EQ(header(r, "Keep-Alive"), "timeout=1, max=100");
  auto start = Clock::now();
  EXPECT_TRUE(c.closed_within(5));
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - start).count(), 0.9);
}

TEST_F(AbuseTest, AConnectionServesAtMostKeepAliveMaxRequests) {
  ServerOptions o = options();
  o.limits.keep_alive_max = 3;
  Running s(o);
  Client c(s.port());
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(c.send(get("/healthz", /*close=*/false)));
    std::string r = c.response();
    EXPECT_EQ(raw_status(r), 200) << i;
    EXPECT_EQ(header(r, "Connection"), i == 3 ? "close" : "") << i;
  }
  EXPECT_TRUE(c.closed_within(5));
}

TEST_F(AbuseTest, ConnectionsBeyondTheLimitAreAnswered503) {
  ServerOptions o = options();
  o.limits.max_connections = 16;
  Running s(o);
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 16; ++i) {
    idle.push_back(std::make_unique<Client>(s.port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  // The server has taken all sixteen in (a request on the last is answered).
  ASSERT_TRUE(idle.back()->send(get("/healthz", false)));
  ASSERT_EQ(raw_status(idle.back()->response()), 200);
  Client extra(s.port());
  std::string r = extra.response();
  EXPECT_EQ(raw_status(r), 503) << r.substr(0, 300);
  EXPECT_EQ(header(r, "Retry-After"), "1");
  EXPECT_NE(r.find("\"code\":\"busy\""), std::string::npos) << r;
  // One goes: there is room again, as soon as the server has seen it go
  // (a bound of seconds on what takes a millisecond).
  idle.front().reset();
  std::string later;
  auto until = Clock::now() + std::chrono::seconds(5);
  while (raw_status(later) != 200 && Clock::now() < until) later = raw_get(s.port(), "/healthz");
  EXPECT_EQ(raw_status(later), 200) << later.substr(0, 200);
}

TEST_F(AbuseTest, AChunkedBodyIsRefusedAsSoonAsItPassesTheLimit) {
  ServerOptions o = options();
  o.limits.max_body_bytes = 1024;
  o.limits.read_timeout_s = 60;  // only the body limit can end this request in time
  o.limits.request_timeout_s = 60;
  Running s(o);
  Client c(s.port());
  std::string head = "POST " + ack_path(db_->info.regression_flag) +
                     " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kToken +
                     "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  ASSERT_TRUE(c.send(head));
  // 64 MB in 64 KiB chunks, from a thread, until the server stops taking them.
  std::atomic<std::size_t> sent{0};
  std::thread sender([&] {
    std::string chunk(64 * 1024, 'x');
    std::string framed = "10000\r\n" + chunk + "\r\n";
    for (int i = 0; i < 1024; ++i) {
      if (!c.send(framed)) return;
      sent += chunk.size();
    }
  });
  std::string r = c.response(10);
  sender.join();
  EXPECT_EQ(raw_status(r), 413) << r.substr(0, 300);
  EXPECT_NE(r.find("payload_too_large"), std::string::npos) << r.substr(0, 300);
  // Loopback buffers take some megabytes; the server read about one chunk.
  EXPECT_LT(sent.load(), std::size_t{32} << 20);
}

TEST_F(AbuseTest, AChunkedBodyWithinTheLimitIsRead) {
  FixtureDb db;  // this one is written to
  ServerOptions o = options();
  o.db = db.path;
  Running s(o);
  std::string body = R"({"reason": "expected: chunked", "by": "abuse_test"})";
  std::string half = body.substr(0, 20), rest = body.substr(20);
  auto hex = [](std::size_t n) {
    char b[16];
    std::snprintf(b, sizeof b, "%zx", n);
    return std::string(b);
  };
  std::string request = "POST " + ack_path(db.info.regression_flag) +
                        " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kToken +
                        "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + hex(half.size()) +
                        "\r\n" + half + "\r\n" + hex(rest.size()) + "\r\n" + rest + "\r\n0\r\n\r\n";
  Client c(s.port());
  ASSERT_TRUE(c.send(request));
  std::string r = c.response();
  EXPECT_EQ(raw_status(r), 200) << r.substr(0, 400);
  EXPECT_NE(r.find("expected: chunked"), std::string::npos) << r.substr(0, 400);
  // A request with a body is the last on its connection.
  EXPECT_EQ(header(r, "Connection"), "close");
}

TEST_F(AbuseTest, ABodyOnAnyOtherRouteIsBoundedToo) {
  ServerOptions o = options();
  o.limits.max_body_bytes = 1024;
  o.limits.read_timeout_s = 60;
  o.limits.request_timeout_s = 60;
  Running s(o);
  // (httplib reads no body of a DELETE without Content-Length: that one is
  // not read at all, answered 404, and the connection closed after it.)
  for (const char* method : {"POST", "PUT", "PATCH"}) {
    Client c(s.port());
    ASSERT_TRUE(c.send(std::string(method) +
                       " /api/v1/commits HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "1000\r\n" + std::string(4096, 'x') + "\r\n"));
    std::string r = c.response();
    EXPECT_EQ(raw_status(r), 413) << method << ": " << r.substr(0, 300);
  }
  std::string small = raw_exchange(s.port(),
                                   "POST /api/v1/commits HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(raw_status(small), 404) << small.substr(0, 300);
}

TEST_F(AbuseTest, ASecondServerCannotTakeThePort) {
  Running first(read_only_options(db_->path));
  ServerOptions o = read_only_options(db_->path);
  o.port = first.port();
  auto second = Server::start(o);
  ASSERT_FALSE(second) << "two servers listen on port " << o.port;
  EXPECT_EQ(second.error().code, ErrorCode::kIo);
  std::string message = second.error().to_string();
  EXPECT_NE(message.find("port " + std::to_string(o.port) + " on 127.0.0.1 is in use"), std::string::npos) << message;
  // The first one still answers every request.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(raw_status(raw_get(first.port(), "/healthz")), 200) << i;
}

TEST_F(AbuseTest, APortHeldWithSoReuseportIsRefusedToo) {
  // Another program that shares its port (SO_REUSEPORT, as httplib's
  // default does) must not get perfwatch's traffic split with it.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ServerOptions o = read_only_options(db_->path);
  o.port = ntohs(a.sin_port);
  auto server = Server::start(o);
  ::close(fd);
  ASSERT_FALSE(server);
  EXPECT_NE(server.error().to_string().find("is in use"), std::string::npos) << server.error().to_string();
}

TEST_F(AbuseTest, AFloodingClientGets429AndOthersAreStillServed) {
  ServerOptions o = options();
  o.limits.expensive_burst = 5;
  o.limits.expensive_per_s = 0.001;
  Running s(o);
  int limited = 0;
  std::string retry_after;
  for (int i = 0; i < 50; ++i) {
    Client flood(s.port(), "127.0.0.1");
    ASSERT_TRUE(flood.send(get("/api/v1/commits?limit=2")));
    std::string r = flood.response();
    if (raw_status(r) == 429) {
      ++limited;
      retry_after = header(r, "Retry-After");
    }
  }
  EXPECT_EQ(limited, 45);
  EXPECT_FALSE(retry_after.empty());
  EXPECT_GT(std::atoi(retry_after.c_str()), 0);
  // Another client has its own allowance.
  Client other(s.port(), "127.0.0.2");
  ASSERT_TRUE(other.connected());
  ASSERT_TRUE(other.send(get("/api/v1/commits?limit=2")));
  EXPECT_EQ(raw_status(other.response()), 200);
}

}  // namespace
}  // namespace perfwatch::web::testing
