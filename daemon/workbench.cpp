#include "daemon/workbench.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "daemon/bench_commit.h"

namespace perfwatch::daemon {

namespace fs = std::filesystem;

Workbench::Workbench(fs::path state_dir, fs::path repo, int rotating)
    : base_(worktree_dir(state_dir, repo)), rotating_(rotating < 1 ? 1 : rotating) {}

fs::path Workbench::memory_path(const fs::path& dir) { return fs::path(dir.string() + ".built"); }

std::optional<Workbench::Memory> Workbench::read_memory(const fs::path& dir) {
  std::ifstream in(memory_path(dir));
  if (!in) return std::nullopt;
  Memory m;
  if (!std::getline(in, m.sha) || !std::getline(in, m.command)) return std::nullopt;
  // A slot whose worktree is gone holds nothing, whatever its file says.
  std::error_code ec;
  if (!fs::exists(dir / ".git", ec)) return std::nullopt;
  return m;
}

Workbench::Lease Workbench::lease(const std::string& sha, const std::string& command,
                                  const std::vector<std::string>& keep, const std::vector<fs::path>& taken) {
  // Preference: the slot that holds this build; else the least recently
  // built slot that holds some other build not kept (an incremental build);
  // else an empty slot (a full build); else the first slot not taken; else
  // the first.
  std::optional<fs::path> filled, empty, free;
  fs::file_time_type oldest = fs::file_time_type::max();
  for (int i = 0; i < rotating_; ++i) {
    fs::path dir = base_.string() + "-" + std::string(1, static_cast<char>('a' + i));
    auto memory = read_memory(dir);
    if (memory && memory->sha == sha && memory->command == command) return {dir, true};
    if (std::find(taken.begin(), taken.end(), dir) != taken.end()) continue;
    if (!free) free = dir;
    if (!memory) {
      if (!empty) empty = dir;
      continue;
    }
    bool kept = false;
    for (const auto& k : keep) kept = kept || memory->sha == k;
    if (kept) continue;
    std::error_code ec;
    fs::file_time_type when = fs::last_write_time(memory_path(dir), ec);
    if (ec) when = fs::file_time_type::min();
    if (!filled || when < oldest) {
      filled = dir;
      oldest = when;
    }
  }
  if (filled) return {*filled, false};
  if (empty) return {*empty, false};
  if (free) return {*free, false};
  return {fs::path(base_.string() + "-a"), false};
}

Workbench::Lease Workbench::named(const std::string& name, const std::string& sha, const std::string& command) {
  fs::path dir = base_.string() + "-" + name;
  auto memory = read_memory(dir);
  return {dir, memory && memory->sha == sha && memory->command == command};
}

bool Workbench::has_build(const std::string& sha, const std::string& command) const {
  for (int i = 0; i < rotating_; ++i) {
    auto memory = read_memory(base_.string() + "-" + std::string(1, static_cast<char>('a' + i)));
    if (memory && memory->sha == sha && memory->command == command) return true;
  }
  return false;
}

void Workbench::forget(const fs::path& dir) {
  std::error_code ec;
  fs::remove(memory_path(dir), ec);
}

void Workbench::remember(const fs::path& dir, const std::string& sha, const std::string& command) {
  fs::path path = memory_path(dir);
  fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << sha << '\n' << command << '\n';
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);  // atomic: a crash leaves the old file or the new one
}

}  // namespace perfwatch::daemon
