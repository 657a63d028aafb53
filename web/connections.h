// The web server's connections between accept() and httplib's request
// handling, so that no client -- slow, idle, flooding or many -- can hold
// the server for others.
//
// httplib 0.11.4 gives each connection a worker thread for its whole life:
// a client sending a byte every 2 s, or an idle keep-alive connection, keeps
// that worker; with all workers held every other client waits. Here one
// thread watches every open connection with epoll and reads each request's
// head (request line and headers) itself; a worker gets the connection only
// when the whole head is there, serves that one request (httplib parses and
// routes it), and hands the connection back. So a worker is only ever busy
// with a request that has fully arrived, and for at most its deadlines.
//
// Bounds (all in ConnectionLimits):
//   - open connections: beyond max_connections a new one is answered 503
//     (Retry-After) and closed; so is an API request when 16 per worker
//     already wait, and a request whose client has gone is not served;
//   - a request's head and body must arrive within request_timeout_s of its
//     first byte (slow clients are dropped however they trickle), its answer
//     must be written within write_timeout_s;
//   - keep-alive: an idle connection is closed after keep_alive_timeout_s,
//     and after keep_alive_max requests;
//   - a request body is read only up to max_body_bytes (plus its framing):
//     beyond that the stream fails, whatever the transfer encoding;
//   - a request with a body is the last on its connection (what follows an
//     unread or refused body cannot be trusted to be the next request).
//
// Two lanes: requests whose head says `GET /healthz` (exact path, any query)
// go to a small pool of their own, so a liveness probe never waits behind
// the API's expensive queries; all others go to the API pool, which serves
// clients (by remote address) in turn, so one client's flood cannot starve
// another client's request. The API workers run 5 nice levels below the rest
// of the server, so that on saturated cores the watcher and the /healthz
// workers get the CPU first.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include <httplib.h>

namespace perfwatch::web {

struct ConnectionLimits {
  int max_connections = 1024;
  int request_timeout_s = 10;
  int read_timeout_s = 5;        // no byte at all for this long inside a request: dropped
  int write_timeout_s = 10;
  int keep_alive_timeout_s = 5;
  int keep_alive_max = 100;
  int api_workers = 8;
  int health_workers = 2;
  std::size_t max_body_bytes = 64 * 1024;
};

class Connections {
 public:
  // Serves one request from `stream` the way httplib's
  // Server::process_request does; returns false when the connection must
  // be closed. `close_connection` asks it to answer with "Connection:
  // close"; it sets `connection_closed` when the client asked for that.
  using ServeOne = std::function<bool(httplib::Stream& stream, bool close_connection, bool& connection_closed)>;

  // Starts the watcher thread and the workers. REQUIRES: limits positive.
  Connections(const ConnectionLimits& limits, ServeOne serve);
  ~Connections();  // stop()

  // Takes ownership of an accepted socket. Never blocks (it is called on
  // the accept thread); a socket over the limit is answered 503 and closed.
  void adopt(int fd);

  // Closes every connection and joins the threads. A request being served
  // finishes first; its reads and writes stop waiting within 100 ms.
  // Idempotent.
  void stop();

  // How many connections are open now (tests, /metrics).
  int open_connections() const;

  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfwatch::web
