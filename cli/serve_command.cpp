#include "cli/serve_command.h"

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "web/server.h"

namespace perfwatch::cli {

namespace {

struct ServeArgs {
  std::string db;
  int port = 8080;
  std::string bind = "127.0.0.1";
  std::string commit_url;
};

bool is_loopback(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

int serve(const GlobalOptions& global, const ServeArgs& args) {
  // SIGINT and SIGTERM are taken by sigwait below: block them before the
  // server's threads start, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  web::ServerOptions options;
  options.db = args.db.empty() ? global.db : args.db;
  options.bind = args.bind;
  options.port = args.port;
  options.read_only = true;
  options.commit_url = args.commit_url;
  auto server = web::Server::start(options);
  if (!server) {
    std::fprintf(stderr, "perfwatch serve: %s\n", server.error().to_string().c_str());
    return server.error().code == ErrorCode::kIo ? kExitStoreError : kExitBadInput;
  }
  if (!is_loopback(args.bind))
    std::fprintf(stderr,
                 "perfwatch serve: listening on %s: anyone who can reach this address can read the database "
                 "(read-only)\n",
                 args.bind.c_str());
  std::string host = args.bind.find(':') != std::string::npos ? "[" + args.bind + "]" : args.bind;
  std::printf("perfwatch: serving %s read-only at http://%s:%d/\n", options.db.string().c_str(), host.c_str(),
              (*server)->port());
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::fprintf(stderr, "perfwatch serve: %s, stopping\n", signal == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->stop();
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, const GlobalOptions& global, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve the dashboard and the JSON API over a database, read-only");
  cmd->add_option("--db", args->db, "The SQLite database (default: the global --db)");
  cmd->add_option("--port", args->port, "Port to listen on (0: any free port)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--bind", args->bind, "Address to listen on")->capture_default_str();
  cmd->add_option("--commit-url", args->commit_url,
                  "Link each commit to its code host: a URL with {sha} for the sha, "
                  "e.g. 'https://github.com/OWNER/REPO/commit/{sha}'");
  cmd->callback([&global, args, exit_code] { *exit_code = serve(global, *args); });
}

}  // namespace perfwatch::cli
