// The HTTP server of perfwatch: the JSON API under /api/v1/, /healthz,
// /metrics (Prometheus text), and the dashboard's static assets, which are
// compiled into the binary (nothing is ever read from the file system).
//
// Reads go through store::ReadPool (read-only connections, one per request,
// never blocking the daemon's writer). The only write -- acknowledging a flag
// -- opens its own read-write connection, and only when the server was
// started with read_only = false and a token; the request must then carry
// "Authorization: Bearer <token>".
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "common/result.h"

namespace perfwatch::web {

// Bounds on what one client can ask of the server (web/connections.h says
// how they are kept). The defaults suit a dashboard on a workstation; tests
// shrink them.
struct ServerLimits {
  std::size_t max_body_bytes = 64 * 1024;  // larger bodies get 413, chunked or not, as soon as the limit is passed
  int request_timeout_s = 10;              // a request's head and body must arrive within this of its first byte
  int read_timeout_s = 5;                  // a client that sends nothing this long inside a request is dropped
  int write_timeout_s = 10;                // an answer must be written within this
  int keep_alive_timeout_s = 5;            // an idle connection is closed after this...
  int keep_alive_max = 100;                // ...or after this many requests
  int max_connections = 1024;              // open at once (fewer if the descriptor limit says so); beyond, 503
  int threads = 8;                         // API requests served at once
  int health_threads = 2;                  // /healthz has its own: it never waits behind the API
  double expensive_per_s = 20;             // history, tables, searches: per client per second...
  double expensive_burst = 40;             // ...after a burst of this many; then 429 with Retry-After
};

struct ServerOptions {
  std::filesystem::path db;          // SQLite file (opened read-only through store::ReadPool; writes through their own store connection)
  std::string bind = "127.0.0.1";   // loopback unless told otherwise
  int port = 8080;                   // 0 = any free port (tests)
  std::string token;                 // bearer token for writes; empty = writes refused (403)
  bool read_only = false;            // `perfwatch serve`: true -- nothing writes
  std::string commit_url;            // the code host's URL of a commit, {sha} for its sha ("" = no links)
  ServerLimits limits;
};

class Server {
 public:
  // Opens the database (it must exist and have this binary's schema), binds
  // bind:port -- exclusively: a port another server holds is an error, never
  // shared -- and serves on background threads. Fails with kInvalidArgument
  // for bad options, kNotFound for a missing database, kIo when the address
  // cannot be bound ("port N on ADDR is in use", "ADDR is not an address of
  // this machine").
  static Result<std::unique_ptr<Server>> start(const ServerOptions& options);  // listens, serves on a background thread
  int port() const;                  // the bound port
  void stop();                       // idempotent; also in the destructor
  ~Server();

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfwatch::web
