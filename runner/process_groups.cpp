#include "runner/process_groups.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace perfwatch::runner {

namespace {

struct Stat {
  std::uint64_t start_ticks = 0;
  int pgrp = 0;
  char state = '?';
};

// /proc/<pid>/stat: "pid (comm) state ppid pgrp ... starttime(22) ...". The
// command may contain spaces and parentheses, so fields count from the last ')'.
std::optional<Stat> read_stat(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  Stat s;
  std::string field;
  // Field 3 is the state; 5 the group; 22 the start time.
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3) s.state = field.empty() ? '?' : field[0];
    if (i == 5) std::from_chars(field.data(), field.data() + field.size(), s.pgrp);
    if (i == 22) {
      std::from_chars(field.data(), field.data() + field.size(), s.start_ticks);
      return s;
    }
  }
  return std::nullopt;
}

// Members of group `pgid` started no earlier than `since`.
std::vector<int> members(int pgid, std::uint64_t since) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    int pid = 0;
    auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (err != std::errc() || end != name.data() + name.size()) continue;
    auto s = read_stat(pid);
    if (s && s->pgrp == pgid && s->start_ticks >= since && s->state != 'Z') out.push_back(pid);
  }
  return out;
}

}  // namespace

std::optional<std::uint64_t> start_ticks_of(int pid) {
  auto s = read_stat(pid);
  if (!s) return std::nullopt;
  return s->start_ticks;
}

ProcessIdentity self() {
  ProcessIdentity me;
  me.pid = static_cast<int>(::getpid());
  me.start_ticks = start_ticks_of(me.pid).value_or(0);
  return me;
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

bool alive(const ProcessIdentity& process) {
  if (process.pid <= 0) return false;
  auto ticks = start_ticks_of(process.pid);
  return ticks && *ticks == process.start_ticks;
}

const char* to_string(Leftover what) {
  switch (what) {
    case Leftover::kGone: return "gone";
    case Leftover::kEnded: return "ended";
    case Leftover::kNotOurs: return "not_ours";
  }
  return "gone";
}

Leftover end_leftover_group(const ProcessIdentity& leader, double grace_s) {
  if (leader.pid <= 1) return Leftover::kNotOurs;
  // The leader's pid taken by another process means our group is gone:
  // its number was free to recycle only once no member was left.
  if (auto ticks = start_ticks_of(leader.pid); ticks && *ticks != leader.start_ticks) return Leftover::kNotOurs;
  auto left = members(leader.pid, leader.start_ticks);
  if (left.empty()) return Leftover::kGone;
  // Each member by its pid, never kill(-pgid): a member is checked, the group id is not.
  for (int pid : left) ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (std::chrono::steady_clock::now() < deadline && !members(leader.pid, leader.start_ticks).empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int pid : members(leader.pid, leader.start_ticks)) ::kill(pid, SIGKILL);
  return Leftover::kEnded;
}

}  // namespace perfwatch::runner
