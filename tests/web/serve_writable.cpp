// perfwatch_web_serve_writable DB TOKEN: serves DB on a free loopback port
// with writes enabled under TOKEN, prints the URL, and stops on SIGTERM or
// SIGINT. `perfwatch serve` is read-only by design and `watch --port` needs
// a repository to watch; the browser test's triage block needs neither,
// only a server that accepts the token.
#include <pthread.h>

#include <csignal>
#include <cstdio>

#include "web/server.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DATABASE TOKEN\n", argv[0]);
    return 2;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before the server's threads start, so they inherit it
  perfwatch::web::ServerOptions options;
  options.db = argv[1];
  options.port = 0;
  options.token = argv[2];
  auto server = perfwatch::web::Server::start(options);
  if (!server) {
    std::fprintf(stderr, "perfwatch_web_serve_writable: %s\n", server.error().to_string().c_str());
    return 1;
  }
  std::printf("http://127.0.0.1:%d/\n", (*server)->port());
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  (*server)->stop();
  return 0;
}
