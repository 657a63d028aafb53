#include "runner/launcher.h"

namespace perfwatch::runner {

ProcessSpec through(const std::vector<std::string>& launcher, ProcessSpec spec) {
  if (launcher.empty()) return spec;
  std::vector<std::string> argv = launcher;
  if (spec.command.empty()) {
    argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  } else {
    argv.insert(argv.end(), {"/bin/sh", "-c", spec.command});
    spec.command.clear();
  }
  spec.argv = std::move(argv);
  return spec;
}

}  // namespace perfwatch::runner
