// perfwatch: continuous performance-regression tracking for GPU kernels.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/adapter_command.h"
#include "cli/bench_command.h"
#include "cli/command_typo.h"
#include "cli/experiment_command.h"
#include "cli/jobs_command.h"
#include "cli/noise_command.h"
#include "cli/query_command.h"
#include "cli/serve_command.h"
#include "cli/watch_command.h"
#include "cli/options.h"

int main(int argc, char** argv) {
  // A child (the bench, a build) that dies while we write to it must not kill us.
  std::signal(SIGPIPE, SIG_IGN);

  CLI::App app{"perfwatch: continuous performance-regression tracking for GPU kernels"};
  app.require_subcommand(1);
  // Global options (--db, --state-dir) are accepted after the subcommand
  // too: subcommands made after this inherit it and hand what they do not
  // know to their parent.
  app.fallthrough();
  app.set_version_flag("--version", "perfwatch 0.1.0");
  perfwatch::cli::GlobalOptions global;
  app.add_option("--db", global.db, "The SQLite database")->capture_default_str();
  app.add_option("--state-dir", global.state_dir, "Where worktrees and logs live (default: <db>.work)");

  int exit_code = perfwatch::cli::kExitOk;
  perfwatch::cli::add_bench_command(app, global, &exit_code);
  perfwatch::cli::add_watch_command(app, global, &exit_code);
  perfwatch::cli::add_noise_command(app, global, &exit_code);
  perfwatch::cli::add_flags_command(app, global, &exit_code);
  perfwatch::cli::add_experiment_command(app, global, &exit_code);
  perfwatch::cli::add_query_command(app, global, &exit_code);
  perfwatch::cli::add_jobs_command(app, global, &exit_code);
  perfwatch::cli::add_serve_command(app, global, &exit_code);
  perfwatch::cli::add_adapter_command(app, &exit_code);

  const std::vector<std::string> args(argv + 1, argv + argc);
  if (auto typo = perfwatch::cli::mistyped_command(app, args)) {
    std::fprintf(stderr, "perfwatch: %s\n", typo->c_str());
    return perfwatch::cli::kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : perfwatch::cli::kExitBadInput;
  } catch (const std::exception& e) {
    // A bug: said in words, not an abort with none (the commands run inside parse).
    std::fprintf(stderr, "perfwatch: internal error: %s\n", e.what());
    return perfwatch::cli::kExitInternal;
  }
  return exit_code;
}
