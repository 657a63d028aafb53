#include "runner/build.h"

#include <fstream>
#include <sstream>

#include "runner/launcher.h"

namespace perfwatch::runner {

std::string probe_toolchain() {
  struct Tool { const char* name; std::vector<std::string> argv; bool last_line; };
  const Tool tools[] = {
      {"c++", {"c++", "--version"}, false},
      {"cmake", {"cmake", "--version"}, false},
      {"nvcc", {"nvcc", "--version"}, true},
  };
  std::string out;
  for (const auto& tool : tools) {
    ProcessSpec spec;
    spec.argv = tool.argv;
    spec.timeout_s = 20;
    Captured c = run_captured(spec);
    if (!c.result.ok()) continue;
    std::istringstream in(c.out);
    std::string line, pick;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (pick.empty() || tool.last_line) pick = line;
      if (!tool.last_line) break;
    }
    if (pick.empty()) continue;
    if (!out.empty()) out += "; ";
    out += std::string(tool.name) + ": " + pick;
  }
  return out;
}

BuildOutcome run_build(const Manifest& manifest, const std::filesystem::path& checkout, const std::filesystem::path& log_path,
                       ChildWatch watch, const std::vector<std::string>& launcher) {
  BuildOutcome b;
  b.command = manifest.build.command;
  b.log_path = log_path;
  b.toolchain = probe_toolchain();
  std::error_code ec;
  std::filesystem::create_directories(log_path.parent_path(), ec);
  auto workdir = resolve_workdir(checkout, manifest.build.workdir, "build.workdir");
  if (!workdir) {
    // Never a run somewhere else: the build fails to start, and says why.
    b.process.outcome = Outcome::kFailedToStart;
    b.process.start_error = workdir.error().to_string();
    b.process.tail = b.process.start_error;
    return b;
  }
  if (manifest.build.command.empty()) {
    // A version 2 manifest without `build`: nothing to build (a Python
    // bench, a script, a prebuilt binary). An ok build, and the log says so.
    std::ofstream(log_path) << "nothing to build: the manifest has no build.command\n";
    b.process.outcome = Outcome::kExited;
    b.process.exit_code = 0;
    b.process.tail = "nothing to build";
    return b;
  }
  ProcessSpec spec;
  spec.command = manifest.build.command;
  spec.workdir = *workdir;
  spec.timeout_s = manifest.build.timeout_s;
  spec.watch = std::move(watch);
  b.process = run_logged(through(launcher, std::move(spec)), log_path);
  return b;
}

}  // namespace perfwatch::runner
