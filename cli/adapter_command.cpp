#include "cli/adapter_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "adapters/adapter.h"
#include "adapters/settings.h"

namespace perfwatch::cli {

void add_adapter_command(CLI::App& app, int* exit_code) {
  auto kind = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("adapter", "Run a Google Benchmark, command or NVBench bench as a protocol bench "
                                                "(started by the runner)");
  cmd->group("");  // hidden: people never type it
  cmd->add_option("--kind", *kind, "google-benchmark, command or nvbench")
      ->required()
      ->check(CLI::IsMember({"google-benchmark", "command", "nvbench"}));
  cmd->callback([kind, exit_code] {
    const char* text = std::getenv(adapters::kBenchVariable);
    std::optional<std::string> bench = text ? std::optional<std::string>(text) : std::nullopt;
    *exit_code = adapters::run_adapter(*adapters::parse_kind(*kind), bench, std::cin, std::cout, std::cerr);
  });
}

}  // namespace perfwatch::cli
