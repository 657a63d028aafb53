#include "web/server.h"

#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "store/read_pool.h"
#include "web/api.h"
#include "web/assets.h"
#include "web/auth.h"
#include "web/connections.h"
#include "web/rate_limiter.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

// Scripts and styles only from this origin (no inline code at all), data
// only from the API, nothing may frame the dashboard.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

std::string dump(const json& doc) {
  // Commit messages are whatever git holds: invalid UTF-8 is replaced, not fatal.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

void write_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(dump(e.body()), "application/json; charset=utf-8");
}

// The error of a status httplib set itself (no route, body too large, ...).
ApiError error_for_status(int status) {
  switch (status) {
    case 400: return {400, "bad_request", "", "malformed request"};
    case 404: return {404, "not_found", "", "no such resource"};
    case 405: return {405, "method_not_allowed", "", "method not allowed here"};
    case 413: return {413, "payload_too_large", "body", "request body too large"};
    case 414: return {414, "uri_too_long", "", "request URI too long"};
    case 416: return {416, "range_not_satisfiable", "", "range not satisfiable"};
    default:
      if (status >= 500) return {status, "internal", "", "internal error; the server's log says more"};
      return {status, "error", "", "request failed"};
  }
}

// httplib's accept loop hands each socket to its task queue; ours passes it
// straight on to Connections::adopt, which never blocks.
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// httplib's server with two things changed: the listening socket is bound
// here (exclusively: httplib's default sets SO_REUSEPORT, with which a
// second server on the same port silently takes half the connections; and
// with a backlog of SOMAXCONN rather than httplib's 5, which drops
// connections under load), and accepted sockets go to Connections, which
// calls back to serve one request at a time.
class HttpServer : public httplib::Server {
 public:
  ~HttpServer() override {
    socket_t fd = svr_sock_.exchange(INVALID_SOCKET);
    if (fd != INVALID_SOCKET) ::close(fd);  // bound, but never listened on
  }

  void set_connections(Connections* connections) { connections_ = connections; }

  bool serve_one(httplib::Stream& stream, bool close_connection, bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed, nullptr);
  }

  // Binds host:port (0: any free port) and listens; returns the port.
  Result<int> bind_exclusive(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string port_text = std::to_string(port);
    if (getaddrinfo(host.c_str(), port_text.c_str(), &hints, &found) != 0 || !found)
      return fail(io_error("--bind " + host, "not an address of this machine"));
    int error = 0;
    int fd = -1;
    for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
      fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        error = errno;
        continue;
      }
      // SO_REUSEADDR only lets a restarted server bind over connections in
      // TIME_WAIT; on Linux it never lets two servers listen on one port.
      int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
        error = errno;
        ::close(fd);
        fd = -1;
      }
    }
    freeaddrinfo(found);
    if (fd < 0) {
      const std::string where = "--port " + port_text;
      if (error == EADDRINUSE)
        return fail(io_error(where, "port " + port_text + " on " + host +
                                        " is in use (another perfwatch serve or watch --port?); choose another "
                                        "with --port, or 0 for any free one"));
      if (error == EADDRNOTAVAIL) return fail(io_error("--bind " + host, "not an address of this machine"));
      if (error == EACCES) return fail(io_error(where, "port " + port_text + " needs privileges; choose one above 1023"));
      return fail(io_error(where, "cannot listen on " + host + ": " + std::strerror(error)));
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    int actual = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                             : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    svr_sock_ = fd;
    return actual;
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    connections_->adopt(sock);
    return true;
  }

  Connections* connections_ = nullptr;
};

// The descriptors a server may spend on connections: the limit, less room
// for the database, logs and the daemon's children.
int connection_room(int wanted) {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return wanted;
  long long room = static_cast<long long>(r.rlim_cur) - 64;
  return static_cast<int>(std::max<long long>(16, std::min<long long>(wanted, room)));
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<store::ReadPool> pool;
  std::unique_ptr<Writer> writer;
  ServerCounters counters;
  std::unique_ptr<Api> api;
  std::unique_ptr<RateLimiter> limiter;
  HttpServer http;
  std::unique_ptr<Connections> connections;
  std::thread thread;
  std::atomic<bool> listen_returned{false};
  int port = 0;
  std::mutex stop_mutex;
  bool stopped = false;

  // Expensive requests take a token of the client's bucket; without one, 429.
  bool admit(const httplib::Request& req, httplib::Response& res) {
    double retry_after = 1;
    if (limiter->allow(req.remote_addr, &retry_after)) return true;
    counters.rate_limited++;
    res.set_header("Retry-After", std::to_string(static_cast<long long>(retry_after) + 1));
    write_error(res, {429, "rate_limited", "", "too many expensive requests; slow down"});
    return false;
  }

  void reply(httplib::Response& res, Reply&& r) {
    if (!r) return write_error(res, r.error());
    res.status = 200;
    // Moved, not copied: a history body is hundreds of kB.
    res.body = r->serialized ? std::move(*r->serialized) : dump(r->json);
    res.set_header("Content-Type", r->content_type);
  }

  using Handler = Reply (Api::*)(const httplib::Request&);
  httplib::Server::Handler route(Handler handler, bool expensive) {
    return [this, handler, expensive](const httplib::Request& req, httplib::Response& res) {
      if (expensive && !admit(req, res)) return;
      reply(res, (api.get()->*handler)(req));
    };
  }

  // A request body, read through httplib's reader (which undoes chunked
  // and compressed transfer) and refused as soon as it passes the limit.
  std::expected<std::string, ApiError> read_body(const httplib::ContentReader& reader, httplib::Response& res) {
    std::string body;
    bool over = false;
    const std::size_t limit = options.limits.max_body_bytes;
    bool complete = reader([&](const char* data, size_t n) {
      if (body.size() + n > limit) {
        over = true;
        return false;
      }
      body.append(data, n);
      return true;
    });
    // httplib itself refuses a Content-Length over the limit (413) and an
    // encoding it cannot undo (415).
    if (over || res.status == 413) return std::unexpected(error_for_status(413));
    if (!complete && res.status >= 400) return std::unexpected(error_for_status(res.status));
    if (!complete) return std::unexpected(ApiError{400, "bad_request", "body", "the body is malformed or incomplete"});
    return body;
  }

  void serve_asset(std::string_view path, const httplib::Request& req, httplib::Response& res) {
    auto asset = find_asset(path);
    if (!asset) return write_error(res, {404, "not_found", "", "no such resource"});
    res.set_header("ETag", asset->etag);
    res.set_header("Cache-Control", "no-cache");
    if (req.get_header_value("If-None-Match") == asset->etag) {
      res.status = 304;
      return;
    }
    res.status = 200;
    res.set_content(std::string(asset->content), std::string(asset->content_type));
  }

  // A route timed under its pattern `name` (route_latency.h): the label
  // is the pattern, so clients cannot multiply the series.
  void get(const char* pattern, const char* name, httplib::Server::Handler handler) {
    const std::size_t id = counters.latency.add(name);
    http.Get(pattern, [this, id, handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
      const auto start = std::chrono::steady_clock::now();
      handler(req, res);
      counters.latency.observe(id, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    });
  }
  // A write: the body first (one over the limit is 413 on every route,
  // whoever sends it; reading it is bounded), then the token, then `write`.
  using Write = Reply (Api::*)(const httplib::Request&, const std::string&);
  void post(const char* pattern, const char* name, Write write) {
    const std::size_t id = counters.latency.add(name);
    http.Post(pattern, [this, id, write](const httplib::Request& req, httplib::Response& res,
                                         const httplib::ContentReader& reader) {
      const auto start = std::chrono::steady_clock::now();
      auto body = read_body(reader, res);
      if (!body) {
        write_error(res, body.error());
      } else {
        authorised(req, res, [&] { reply(res, (api.get()->*write)(req, *body)); });
      }
      counters.latency.observe(id, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    });
  }

  void routes() {
    get("/healthz", "/healthz", route(&Api::healthz, false));
    get("/metrics", "/metrics", route(&Api::metrics, false));
    get("/api/v1/repos", "/api/v1/repos", route(&Api::repos, false));
    get("/api/v1/commits", "/api/v1/commits", route(&Api::commits, true));
    get(R"(/api/v1/commits/([0-9A-Fa-f]{4,64}))", "/api/v1/commits/{sha}", route(&Api::commit, true));
    get("/api/v1/series", "/api/v1/series", route(&Api::series, true));
    get("/api/v1/history", "/api/v1/history", route(&Api::history, true));
    get("/api/v1/ab", "/api/v1/ab", route(&Api::ab, true));
    get("/api/v1/compare", "/api/v1/compare", route(&Api::compare, true));
    get("/api/v1/testbeds", "/api/v1/testbeds", route(&Api::testbeds, false));
    get(R"(/api/v1/runs/(\d{1,19}))", "/api/v1/runs/{id}", route(&Api::run, true));
    get(R"(/api/v1/runs/(\d{1,19})/compare/(\d{1,19}))", "/api/v1/runs/{a}/compare/{b}", route(&Api::compare_runs, true));
    get("/api/v1/jobs", "/api/v1/jobs", route(&Api::jobs, true));
    get("/api/v1/webhooks", "/api/v1/webhooks", route(&Api::webhooks, true));
    get("/api/v1/flags", "/api/v1/flags", route(&Api::flags, false));
    get(R"(/api/v1/flags/(\d{1,19}))", "/api/v1/flags/{id}", route(&Api::flag, false));
    get("/api/v1/alert-groups", "/api/v1/alert-groups", route(&Api::alert_groups, false));
    post(R"(/api/v1/flags/(\d{1,19})/acknowledge)", "/api/v1/flags/{id}/acknowledge", &Api::acknowledge);
    post(R"(/api/v1/alert-groups/([0-9A-Fa-f]{4,64})/triage)", "/api/v1/alert-groups/{sha}/triage", &Api::triage_group);
    post(R"(/api/v1/commits/([0-9A-Fa-f]{4,64})/requeue)", "/api/v1/commits/{sha}/requeue", &Api::requeue);
    // Any other request with a body: httplib would read the whole of it
    // into memory before routing (a chunked one without any limit). Read
    // it under the limit here, then answer that there is no such resource.
    auto no_body_route = [this](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& reader) {
      auto body = read_body(reader, res);
      write_error(res, body ? ApiError{404, "not_found", "", "no such resource"} : body.error());
    };
    http.Post(".*", no_body_route);
    http.Put(".*", no_body_route);
    http.Patch(".*", no_body_route);
    http.Delete(".*", no_body_route);
    get("/api/v1/experiments", "/api/v1/experiments", route(&Api::experiments, true));
    get("/api/v1/investigations", "/api/v1/investigations", route(&Api::investigations, true));
    get(R"(/api/v1/experiments/(\d{1,19}))", "/api/v1/experiments/{id}", route(&Api::experiment, false));

    auto index = [this](const httplib::Request& req, httplib::Response& res) { serve_asset("index.html", req, res); };
    get("/", "/", index);
    get("/index.html", "/index.html", index);
    get(R"(/assets/([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?))", "/assets/{file}",
        [this](const httplib::Request& req, httplib::Response& res) { serve_asset(req.matches[1].str(), req, res); });
  }

  // Every write: writes must be enabled (403), and the request must carry
  // the bearer token (401).
  template <class F>
  void authorised(const httplib::Request& req, httplib::Response& res, F&& write) {
    if (options.read_only || options.token.empty())
      return write_error(res, {403, "writes_disabled", "",
                               options.read_only ? "this server is read-only"
                                                 : "writes are disabled: the server has no token"});
    switch (check_bearer(req.get_header_value("Authorization"), options.token)) {
      case AuthResult::kOk:
        return write();
      case AuthResult::kMissing:
        res.set_header("WWW-Authenticate", "Bearer realm=\"perfwatch\"");
        return write_error(res, {401, "unauthorized", "Authorization", "a bearer token is required"});
      case AuthResult::kInvalid:
        res.set_header("WWW-Authenticate", "Bearer realm=\"perfwatch\", error=\"invalid_token\"");
        return write_error(res, {401, "unauthorized", "Authorization", "the bearer token is not valid"});
    }
  }

  void configure() {
    const auto& limits = options.limits;
    // Connections keeps the timeouts and keep-alive bounds; httplib still
    // refuses a Content-Length over the limit and names both in its
    // Keep-Alive header.
    http.new_task_queue = [] { return new InlineQueue; };
    http.set_payload_max_length(limits.max_body_bytes);
    http.set_keep_alive_max_count(static_cast<size_t>(limits.keep_alive_max));
    http.set_keep_alive_timeout(limits.keep_alive_timeout_s);

    http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "unknown exception";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      std::fprintf(stderr, "perfwatch web: %s %s: %s\n", req.method.c_str(), req.path.c_str(), what.c_str());
      write_error(res, internal_error());
    });
    // httplib's own errors (no route, 413, 414, ...) become JSON too; a body a
    // handler already wrote stays as it is.
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request&, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          write_error(res, error_for_status(res.status));
          return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_post_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Content-Security-Policy", kContentSecurityPolicy);
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("X-Frame-Options", "DENY");
      res.set_header("Referrer-Policy", "no-referrer");
      res.set_header("Cross-Origin-Opener-Policy", "same-origin");
      if (!res.has_header("Cache-Control")) res.set_header("Cache-Control", "no-store");
      counters.requests++;
      if (res.status >= 500) counters.errors_5xx++;
      else if (res.status >= 400) counters.errors_4xx++;
      (void)req;
    });
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { stop(); }

int Server::port() const { return impl_->port; }

void Server::stop() {
  std::lock_guard lock(impl_->stop_mutex);
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->connections) impl_->connections->stop();
}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options) {
  if (options.port < 0 || options.port > 65535)
    return fail(invalid_argument("--port", "must be from 0 to 65535"));
  if (options.bind.empty()) return fail(invalid_argument("--bind", "must be an address"));
  const auto& limits = options.limits;
  if (limits.threads < 1 || limits.health_threads < 1 || limits.max_body_bytes < 1 || limits.read_timeout_s < 1 ||
      limits.write_timeout_s < 1 || limits.request_timeout_s < 1 || limits.keep_alive_timeout_s < 1 ||
      limits.keep_alive_max < 1 || limits.max_connections < 1 || limits.expensive_burst < 1 ||
      limits.expensive_per_s < 0)
    return fail(invalid_argument("server limits",
                                 "threads, body size, timeouts, keep-alive, connections and burst must be positive"));
  if (!options.commit_url.empty()) {
    auto checked = check_commit_url(options.commit_url);
    if (!checked) return fail(checked.error());
  }
  std::error_code ec;
  if (!std::filesystem::exists(options.db, ec))
    return fail(perfwatch::not_found(options.db.string(), "no such database (run perfwatch bench or watch first)"));

  auto impl = std::make_unique<Impl>();
  impl->options = options;
  auto pool = store::ReadPool::open(options.db, limits.threads + limits.health_threads);
  if (!pool) return fail(pool.error());
  impl->pool = std::move(*pool);
  if (!options.read_only && !options.token.empty()) impl->writer = std::make_unique<Writer>(options.db);
  impl->api = std::make_unique<Api>(*impl->pool, impl->writer.get(), impl->counters, options.commit_url);
  impl->limiter = std::make_unique<RateLimiter>(RatePolicy{limits.expensive_per_s, limits.expensive_burst, 4096});
  impl->configure();
  impl->routes();

  auto port = impl->http.bind_exclusive(options.bind, options.port);
  if (!port) return fail(port.error());
  impl->port = *port;
  const std::string where = options.bind + ":" + std::to_string(*port);

  ConnectionLimits cl;
  cl.max_connections = connection_room(limits.max_connections);
  cl.request_timeout_s = limits.request_timeout_s;
  cl.read_timeout_s = limits.read_timeout_s;
  cl.write_timeout_s = limits.write_timeout_s;
  cl.keep_alive_timeout_s = limits.keep_alive_timeout_s;
  cl.keep_alive_max = limits.keep_alive_max;
  cl.api_workers = limits.threads;
  cl.health_workers = limits.health_threads;
  cl.max_body_bytes = limits.max_body_bytes;
  HttpServer* http = &impl->http;
  impl->connections = std::make_unique<Connections>(
      cl, [http](httplib::Stream& stream, bool close_connection, bool& connection_closed) {
        return http->serve_one(stream, close_connection, connection_closed);
      });
  impl->http.set_connections(impl->connections.get());
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    raw->http.listen_after_bind();
    raw->listen_returned = true;
  });
  // stop() only reaches a server that is running: wait until it is (the
  // socket already accepts connections into its backlog meanwhile).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!raw->http.is_running() && !raw->listen_returned && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!raw->http.is_running()) {
    // stop() is a no-op until the loop runs: repeat it until the thread ends.
    while (!raw->listen_returned) {
      raw->http.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    raw->thread.join();
    return fail(io_error(where, "the server did not start listening"));
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace perfwatch::web
