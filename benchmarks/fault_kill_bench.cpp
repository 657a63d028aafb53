// fault_kill_bench: kill -9 a real `perfwatch watch` at random points, many
// times, and check that what it finally recorded is what an undisturbed watch
// of the same history records -- nothing lost, nothing duplicated, no process
// left behind, every webhook message delivered.
//
// The history is a small git repository watched with the runner tests' fake
// bench, whose numbers are the same in every process (its noise is a fixed
// sequence), so an undisturbed watch (the reference) and a watch killed any
// number of times must end with the same flags and webhook messages (each
// delivered), the same pooled values, every ok run whole, nothing left running
// -- and, where no commit was given up and re-queued (which changes the order
// of the work, see compare()), the same runs and experiments too.
//
// Each kill aims at one stage, in turn, and fires at a random moment inside
// it, seen from outside (never by a sleep alone):
//   build    the build command has started (it appends to a marker file);
//   bench    a run of this process is `running` with trials stored, so the
//            kill lands while trials are read and stored;
//   judge    a run has just ended (its event-log line): judging, storing the
//            verdicts and the outbox, or the next run's start follow;
//   webhook  a POST is in flight (the receiver holds it unanswered);
//   any      a uniformly random moment of the process's life.
// Where each kill really landed is read afterwards (the last event-log line
// before it, a run left running, a build not finished) and reported.
//
// A round is one fresh database watched until `watch --once` exits 0 without
// a kill. Rounds alternate: dense ones kill every start, so a job is often cut
// off three times (kills count as attempts, stops do not) and given up -- the
// bench then re-queues it with `perfwatch jobs requeue`, as a person would;
// spaced ones let each start finish a job before the next kill, so nothing is
// given up and the order of the work is the undisturbed watch's. Rounds
// repeat until --kills kills have been made.
//
// usage: fault_kill_bench [--perfwatch PATH] [--bench PATH] [--kills N] [--seed N]
//                         [--keep DIR] [--check] [--markdown FILE] [--json FILE]
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "runner/process.h"
#include "tests/daemon/hook_receiver.h"

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string perfwatch = FAULT_KILL_PERFWATCH;
  std::string bench = FAULT_KILL_BENCH;
  int kills = 40;
  unsigned long long seed = 1;
  std::string keep;
  bool check = false;
  std::string markdown, json_out;
};

const std::vector<std::string> kStages = {"build", "bench", "judge", "webhook", "any"};

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Runs a shell command in `dir`; throws with its output when it fails (the
// bench's own setup, not what it measures).
std::string sh(const fs::path& dir, const std::string& command) {
  perfwatch::runner::ProcessSpec spec;
  spec.command = command;
  spec.workdir = dir;
  spec.timeout_s = 120;
  spec.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_TERMINAL_PROMPT", "0"}};
  auto out = perfwatch::runner::run_captured(spec);
  if (!out.result.ok()) throw std::runtime_error("`" + command + "` " + out.result.describe() + ": " + out.result.tail);
  return out.out;
}

// ---- the history ----------------------------------------------------------

struct History {
  fs::path repo;
  fs::path marks;  // the build command's marker file lives here
  std::string first;
  std::vector<std::string> shas;
};

json manifest(const Options& o, const fs::path& marks, const std::string& slow) {
  const std::string builds = shell_quote((marks / "builds").string());
  // ~25 lines a second, so a run lasts about a second and can be caught in progress.
  const std::string bench = shell_quote(o.bench) +
                            " | while IFS= read -r line; do printf '%s\\n' \"$line\"; sleep 0.04; done";
  json env = json::object();
  if (!slow.empty()) env["FAKE_BENCH_SLOW"] = slow;
  return {{"schema_version", 1},
          {"build", {{"command", "echo start >> " + builds + "; sleep 0.3; echo end >> " + builds}}},
          {"paths", {"src/", "perfwatch.json"}},
          {"bench", {{"command", bench}, {"timeout_s", 120}, {"idle_timeout_s", 30}, {"env", env}}},
          {"variants",
           {{{"name", "base"}, {"baseline", true}, {"params", {{"block_t", 32}}}},
            {{"name", "wide"}, {"params", {{"block_t", 64}}}, {"hypothesis", "wider tiles"}}}},
          {"sweep", {{"batch", {1, 8}}}},
          {"trials", {{"min", 3}, {"max", 6}, {"target_rel_ci", 0.5}, {"budget_s", 30}}},
          {"runs", {{"per_commit", 3}, {"max_per_commit", 6}}}};
}

// A baseline, a regression of one variant (flags, webhooks, an experiment),
// an unchanged source change, the revert, a second regression, a docs-only
// commit (inherited: no build, no run) and another unchanged change.
History make_history(const Options& o, const fs::path& dir) {
  History h;
  h.repo = dir / "repo";
  h.marks = dir / "marks";
  fs::create_directories(h.repo);
  fs::create_directories(h.marks);
  sh(h.repo, "git init -q -b main && git config user.email fault@example.com && git config user.name fault");
  struct Step {
    std::string slow, file, content, message;
  };
  const std::vector<Step> steps = {
      {"", "src/k.c", "1", "baseline"},
      {"base:1.5", "src/k.c", "2", "slower base tiles"},
      {"base:1.5", "src/k.c", "3", "a comment"},
      {"", "src/k.c", "4", "revert the slower base tiles"},
      {"wide:1.3", "src/k.c", "5", "slower wide tiles"},
      {"wide:1.3", "README.md", "docs", "docs only"},
      {"wide:1.3", "src/k.c", "6", "another comment"},
  };
  for (const auto& s : steps) {
    write_file(h.repo / "perfwatch.json", manifest(o, h.marks, s.slow).dump(2));
    write_file(h.repo / s.file, s.content + "\n");
    sh(h.repo, "git add -A && git commit -q -m " + shell_quote(s.message));
    std::string sha = sh(h.repo, "git rev-parse HEAD");
    while (!sha.empty() && (sha.back() == '\n' || sha.back() == ' ')) sha.pop_back();
    h.shas.push_back(sha);
  }
  h.first = h.shas.front();
  return h;
}

// ---- perfwatch, reached through its command line --------------------------

struct Daemon {
  pid_t pid = -1;
  Clock::time_point started;
};

Daemon spawn(const Options& o, const std::vector<std::string>& args, const fs::path& log, const std::string& mark) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv{const_cast<char*>(o.perfwatch.c_str())};
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  // A mark every descendant inherits: what is still alive at the end carries it.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  env_text.push_back("FAULT_KILL_MARK=" + mark);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  Daemon d;
  if (posix_spawn(&d.pid, o.perfwatch.c_str(), &actions, nullptr, argv.data(), envp.data()) != 0) d.pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  d.started = Clock::now();
  return d;
}

// The exit status if the process has ended (128 + signal for a signal).
std::optional<int> exited(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, WNOHANG) != pid) return std::nullopt;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---- the database, read with SQL (any build of perfwatch can be measured) -

class Db {
 public:
  explicit Db(const fs::path& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      sqlite3_close(db_);
      db_ = nullptr;
    } else {
      sqlite3_busy_timeout(db_, 5000);
    }
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  bool ok() const { return db_ != nullptr; }

  // Every row as text, columns joined by '|'.
  std::vector<std::string> rows(const std::string& sql, std::optional<long long> bind = std::nullopt) const {
    std::vector<std::string> out;
    if (!db_) return out;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("sql: ") + sqlite3_errmsg(db_) + ": " + sql);
    if (bind) sqlite3_bind_int64(st, 1, *bind);
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        if (c) row += '|';
        const auto* text = sqlite3_column_text(st, c);
        row += text ? reinterpret_cast<const char*>(text) : "NULL";
      }
      out.push_back(row);
    }
    sqlite3_finalize(st);
    return out;
  }
  long long count(const std::string& sql, std::optional<long long> bind = std::nullopt) const {
    auto r = rows(sql, bind);
    return r.empty() || r[0] == "NULL" ? 0 : std::stoll(r[0]);
  }
  // As count, while perfwatch may still be creating the database: a table
  // not there yet counts nothing.
  long long count_so_far(const std::string& sql, std::optional<long long> bind = std::nullopt) const {
    try {
      return count(sql, bind);
    } catch (const std::runtime_error&) {
      return 0;
    }
  }

 private:
  sqlite3* db_ = nullptr;
};

// What a finished watch recorded, in a form two databases can be compared in.
struct Recorded {
  std::multiset<std::string> ok_runs;      // commit | trials of each ok run
  std::set<std::string> trial_counts;      // the trials of an ok run, each count seen
  std::set<std::string> pooled;            // commit | variant | point | runs | pooled value
  std::set<std::string> pooled_values;     // commit | variant | point | pooled value
  std::set<std::string> flags;             // commit | variant | point | kind | open
  std::multiset<std::string> experiments;  // source | verdict
  std::multiset<std::string> messages;     // commit | event | flag's cell
  std::set<std::string> message_ids;
  long long running_runs = 0, live_jobs = 0, pending_messages = 0, cut_off_runs = 0, gave_up_jobs = 0;
};

Recorded read_recorded(const fs::path& db_path) {
  Db db(db_path);
  if (!db.ok()) throw std::runtime_error("cannot open " + db_path.string());
  Recorded r;
  for (auto& s : db.rows("SELECT c.sha, r.trial_count FROM runs r JOIN commits c ON c.id = r.commit_id "
                         "WHERE r.status = 'ok'"))
    r.ok_runs.insert(s);
  for (auto& s : db.rows("SELECT DISTINCT trial_count FROM runs WHERE status = 'ok'")) r.trial_counts.insert(s);
  for (auto& s : db.rows("SELECT c.sha, s.variant, p.key, s.runs, printf('%.9g', s.geomean_of_run_medians) "
                         "FROM commit_summaries s JOIN commits c ON c.id = s.commit_id JOIN points p ON p.id = s.point_id")) {
    // The same row without its run count (the fourth column).
    std::size_t runs_at = 0;
    for (int bar = 0; bar < 3; ++bar) runs_at = s.find('|', runs_at) + 1;
    r.pooled_values.insert(s.substr(0, runs_at) + s.substr(s.find('|', runs_at) + 1));
    r.pooled.insert(s);
  }
  for (auto& s : db.rows("SELECT c.sha, f.variant, p.key, f.kind, (f.ack_at IS NULL AND f.withdrawn_at IS NULL) "
                         "FROM flags f JOIN commits c ON c.id = f.commit_id JOIN points p ON p.id = f.point_id"))
    r.flags.insert(s);
  for (auto& s : db.rows("SELECT source, verdict FROM experiments")) r.experiments.insert(s);
  for (auto& s : db.rows("SELECT o.commit_sha, o.event, f.variant, p.key FROM outbox o "
                         "LEFT JOIN flags f ON f.id = o.flag_id LEFT JOIN points p ON p.id = f.point_id"))
    r.messages.insert(s);
  for (auto& s : db.rows("SELECT message_id FROM outbox")) r.message_ids.insert(s);
  r.running_runs = db.count("SELECT count(*) FROM runs WHERE status = 'running'");
  r.live_jobs = db.count("SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')");
  r.pending_messages = db.count("SELECT count(*) FROM outbox WHERE state <> 'delivered'");
  r.cut_off_runs = db.count("SELECT count(*) FROM runs WHERE status = 'cut_off'");
  r.gave_up_jobs = db.count("SELECT count(*) FROM jobs WHERE state = 'gave_up'");
  return r;
}

// Processes alive (not zombies) that carry `mark` in their environment.
std::vector<std::string> marked_processes(const std::string& mark) {
  std::vector<std::string> out;
  const std::string needle = "FAULT_KILL_MARK=" + mark;
  DIR* proc = opendir("/proc");
  if (!proc) return out;
  while (dirent* e = readdir(proc)) {
    const std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(name) == getpid()) continue;
    const std::string environ_text = read_file("/proc/" + name + "/environ");
    std::string vars = environ_text;
    for (auto& ch : vars)
      if (ch == '\0') ch = '\n';
    if (("\n" + vars).find("\n" + needle + "\n") == std::string::npos) continue;
    const std::string stat = read_file("/proc/" + name + "/stat");
    if (stat.find(") Z") != std::string::npos) continue;
    std::string cmd = read_file("/proc/" + name + "/cmdline");
    for (auto& ch : cmd)
      if (ch == '\0') ch = ' ';
    out.push_back(name + ": " + cmd);
  }
  closedir(proc);
  return out;
}

// ---- one kill -------------------------------------------------------------

struct Kill {
  std::string aimed;    // the stage aimed at
  std::string landed;   // where it landed, read afterwards
  double at_s = 0;      // seconds after the process started
};

long long count_lines_with(const std::string& text, const std::string& needle) {
  long long n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The step of the last event-log line written after byte `from`.
std::string last_step(const std::string& log, std::size_t from) {
  std::string tail = log.substr(std::min(from, log.size()));
  auto at = tail.rfind(" step=");
  if (at == std::string::npos) return "start";
  auto end = tail.find_first_of(" \n", at + 6);
  return tail.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

class Killer {
 public:
  Killer(const History& h, perfwatch::daemon::testing::HookReceiver& hook, std::mt19937_64& rng)
      : h_(h), hook_(hook), rng_(rng) {}

  // Waits for `stage`'s moment in the process `d` and kills it then; nullopt
  // when the process ended first (its exit status is in *status).
  std::optional<Kill> aim(const Daemon& d, const std::string& stage, const fs::path& db_path, const fs::path& log,
                          bool after_a_job, int* status) {
    const std::size_t log_from = read_file(log).size();
    // Spaced: this start first finishes the job the last kill cut off, so no
    // job is cut off twice and none is given up.
    while (after_a_job && count_lines_with(read_file(log).substr(log_from), " step=done ") == 0) {
      if (auto s = exited(d.pid)) {
        *status = *s;
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const long long builds_before = count_lines_with(read_file(h_.marks / "builds"), "start");
    const long long runs_before = count_lines_with(read_file(log).substr(log_from), " step=run ");
    const std::size_t posts_before = hook_.received().size();
    if (stage == "webhook") hook_.hold(true);
    std::uniform_real_distribution<double> unit(0, 1);
    std::optional<Clock::time_point> fire;
    if (stage == "any") fire = d.started + std::chrono::milliseconds(static_cast<int>(unit(rng_) * 4000));
    const auto give_up = Clock::now() + std::chrono::seconds(180);
    while (Clock::now() < give_up) {
      if (auto s = exited(d.pid)) {
        hook_.hold(false);
        *status = *s;
        return std::nullopt;
      }
      if (!fire) {
        int delay_ms = -1;
        if (stage == "build" && count_lines_with(read_file(h_.marks / "builds"), "start") > builds_before) {
          delay_ms = static_cast<int>(unit(rng_) * 250);
        } else if (stage == "bench") {
          Db db(db_path);
          if (db.ok() && db.count_so_far("SELECT count(*) FROM runs r WHERE r.status = 'running' AND r.owner_pid = ?1 AND "
                                  "EXISTS (SELECT 1 FROM trials t WHERE t.run_id = r.id)",
                                  d.pid) > 0)
            delay_ms = static_cast<int>(unit(rng_) * 300);
        } else if (stage == "judge" &&
                   count_lines_with(read_file(log).substr(log_from), " step=run ") > runs_before) {
          delay_ms = static_cast<int>(unit(rng_) * 40);
        } else if (stage == "webhook" && hook_.received().size() > posts_before) {
          delay_ms = 0;
        }
        if (delay_ms >= 0) fire = Clock::now() + std::chrono::milliseconds(delay_ms);
      }
      if (fire && Clock::now() >= *fire) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(fire ? 1 : 5));
    }
    Kill k;
    k.aimed = stage;
    k.at_s = std::chrono::duration<double>(Clock::now() - d.started).count();
    ::kill(d.pid, SIGKILL);
    wait_for(d.pid);
    const bool post_in_flight = stage == "webhook" && hook_.received().size() > posts_before;
    hook_.hold(false);
    k.landed = landed(d, db_path, read_file(log), log_from, post_in_flight);
    return k;
  }

 private:
  std::string landed(const Daemon& d, const fs::path& db_path, const std::string& log, std::size_t log_from,
                     bool post_in_flight) {
    if (post_in_flight) return "webhook POST in flight";
    const std::string builds = read_file(h_.marks / "builds");
    if (count_lines_with(builds, "start") > count_lines_with(builds, "end")) {
      // The build the kill interrupted never writes its end: count it as ended.
      std::ofstream(h_.marks / "builds", std::ios::app) << "end (killed)\n";
      return "build running";
    }
    Db db(db_path);
    if (db.ok()) {
      const long long running =
          db.count_so_far("SELECT count(*) FROM runs WHERE status = 'running' AND owner_pid = ?1", d.pid);
      if (running > 0) {
        const long long trials = db.count_so_far(
            "SELECT count(*) FROM trials t JOIN runs r ON r.id = t.run_id WHERE r.status = 'running' AND r.owner_pid = ?1",
            d.pid);
        return trials > 0 ? "bench running, trials stored" : "bench starting";
      }
    }
    return "between steps, after '" + last_step(log, log_from) + "'";
  }

  const History& h_;
  perfwatch::daemon::testing::HookReceiver& hook_;
  std::mt19937_64& rng_;
};

// ---- rounds ---------------------------------------------------------------

struct Round {
  // Dense rounds kill every start, so a job is often cut off three times and
  // given up; spaced rounds let each start finish a job before the next kill.
  bool spaced = false;
  int kills = 0, restarts = 0, requeued = 0;
  double wall_s = 0;
  Recorded recorded;
  std::vector<std::string> problems;
  std::vector<std::string> after_requeue;  // runs or A/B verdicts that differ after a re-queue (see compare)
};

std::vector<std::string> watch_args(const fs::path& db, const fs::path& state, const History& h, const std::string& url) {
  return {"--db", db.string(), "--state-dir", state.string(), "watch", "--repo", h.repo.string(), "--branch", "main",
          "--since", h.first, "--once", "--webhook", url};
}

// Re-queues every commit given up on that has no live or finished job since.
int requeue_given_up(const Options& o, const fs::path& db_path, const fs::path& state, const History& h) {
  Db db(db_path);
  if (!db.ok()) return 0;
  int n = 0;
  std::vector<std::string> given_up;
  try {
    given_up = db.rows("SELECT DISTINCT commit_sha FROM jobs j WHERE state = 'gave_up' AND NOT EXISTS (SELECT 1 FROM jobs k "
               "WHERE k.commit_sha = j.commit_sha AND k.state IN ('queued', 'running', 'done'))");
  } catch (const std::runtime_error&) {
    return 0;  // killed while it created the database: nothing to re-queue yet
  }
  for (const auto& sha : given_up) {
    sh(h.repo, shell_quote(o.perfwatch) + " --db " + shell_quote(db_path.string()) + " --state-dir " +
                   shell_quote(state.string()) + " jobs requeue " + sha + " --by fault_kill_bench");
    ++n;
  }
  return n;
}

template <class T>
std::string difference(const std::string& what, const T& want, const T& got) {
  if (want == got) return "";
  std::ostringstream s;
  s << what << " differ from the undisturbed watch's:";
  for (const auto& x : want)
    if (!got.count(x)) s << " missing [" << x << "]";
  for (const auto& x : got)
    if (!want.count(x)) s << " extra [" << x << "]";
  if (want.size() != got.size()) s << " (" << want.size() << " vs " << got.size() << ")";
  return s.str();
}

// What must hold however the watch was killed: every flag and webhook
// message of the undisturbed watch and no other, each commit's pooled values,
// every ok run whole, nothing left running. `order_kept`: no commit was given
// up and re-queued, so the work was done in the same order and the runs and
// experiments must match too. (A commit re-queued later is measured beside
// neighbours whose builds are no longer in a slot: it gets fewer A B re-runs,
// and an A/B verdict read off fewer runs can differ. That is the documented
// cost of a re-queue, not a loss; the report counts it apart.)
std::vector<std::string> compare(const Recorded& want, const Recorded& got, bool order_kept,
                                 std::vector<std::string>* after_requeue) {
  std::vector<std::string> p;
  for (auto d : {difference("flags", want.flags, got.flags), difference("webhook messages", want.messages, got.messages),
                 difference("pooled values", want.pooled_values, got.pooled_values),
                 difference("trials of an ok run", want.trial_counts, got.trial_counts)})
    if (!d.empty()) p.push_back(d);
  for (auto d : {difference("ok runs (commit|trials)", want.ok_runs, got.ok_runs),
                 difference("pooled values with their runs", want.pooled, got.pooled),
                 difference("experiments", want.experiments, got.experiments)})
    if (!d.empty()) (order_kept ? p : *after_requeue).push_back(d);
  if (got.running_runs) p.push_back(std::to_string(got.running_runs) + " runs left `running`");
  if (got.live_jobs) p.push_back(std::to_string(got.live_jobs) + " jobs left queued or running");
  if (got.pending_messages) p.push_back(std::to_string(got.pending_messages) + " webhook messages not delivered");
  return p;
}

struct Totals {
  std::vector<Kill> kills;
  std::vector<Round> rounds;
  Recorded reference;
  double reference_wall_s = 0;
  long long duplicate_deliveries = 0, undelivered_ids = 0;
  std::vector<std::string> orphans;
  double wall_s = 0;
};

Totals measure(const Options& o, const fs::path& work) {
  Totals t;
  const auto t0 = Clock::now();
  History h = make_history(o, work);
  perfwatch::daemon::testing::HookReceiver hook;
  std::mt19937_64 rng(o.seed);
  const std::string mark = "fk" + std::to_string(getpid()) + "_" + std::to_string(o.seed);

  {  // The reference: one undisturbed watch.
    const fs::path dir = work / "reference";
    fs::create_directories(dir);
    auto d = spawn(o, watch_args(dir / "perfwatch.db", dir / "state", h, hook.url()), dir / "watch.log", mark);
    const int status = wait_for(d.pid);
    t.reference_wall_s = std::chrono::duration<double>(Clock::now() - d.started).count();
    if (status != 0) throw std::runtime_error("the undisturbed watch exited " + std::to_string(status) + ":\n" +
                                              read_file(dir / "watch.log"));
    t.reference = read_recorded(dir / "perfwatch.db");
    std::vector<std::string> ignored;
    if (!compare(t.reference, t.reference, true, &ignored).empty() || t.reference.running_runs ||
        t.reference.pending_messages)
      throw std::runtime_error("the undisturbed watch left work undone");
  }

  Killer killer(h, hook, rng);
  int stage = 0;
  while (static_cast<int>(t.kills.size()) < o.kills) {
    Round round;
    round.spaced = t.rounds.size() % 2 == 1;
    const fs::path dir = work / ("round" + std::to_string(t.rounds.size() + 1));
    fs::create_directories(dir);
    const fs::path db = dir / "perfwatch.db";
    const auto r0 = Clock::now();
    for (int attempt = 0; attempt < 200; ++attempt) {
      round.requeued += requeue_given_up(o, db, dir / "state", h);
      auto d = spawn(o, watch_args(db, dir / "state", h, hook.url()), dir / "watch.log", mark);
      if (d.pid <= 0) throw std::runtime_error("cannot start " + o.perfwatch);
      ++round.restarts;
      int status = 0;
      if (static_cast<int>(t.kills.size()) >= o.kills) {
        status = wait_for(d.pid);
      } else if (auto k = killer.aim(d, kStages[stage % kStages.size()], db, dir / "watch.log",
                                     round.spaced && round.kills > 0, &status)) {
        ++stage;
        ++round.kills;
        t.kills.push_back(*k);
        continue;
      }
      if (status != 0) {
        // The log's last lines say why (an abort's message, the error it ended on).
        round.problems.push_back("watch exited " + std::to_string(status) + " unkilled; its log ends:\n" +
                                 perfwatch::runner::file_tail(dir / "watch.log", 2000));
        break;
      }
      Db check(db);
      const long long gave_up_left = check.count_so_far(
          "SELECT count(*) FROM jobs j WHERE state = 'gave_up' AND NOT EXISTS (SELECT 1 FROM jobs k "
          "WHERE k.commit_sha = j.commit_sha AND k.state IN ('queued', 'running', 'done'))");
      if (gave_up_left == 0) break;
    }
    --round.restarts;  // the first start is not a restart
    round.wall_s = std::chrono::duration<double>(Clock::now() - r0).count();
    round.recorded = read_recorded(db);
    for (auto& p : compare(t.reference, round.recorded, round.requeued == 0, &round.after_requeue))
      round.problems.push_back(p);
    t.rounds.push_back(round);
  }

  // Webhooks: every message of every round reached the receiver with a 2xx.
  std::map<std::string, int> delivered;
  for (const auto& r : hook.received())
    if (r.answered >= 200 && r.answered < 300) ++delivered[r.message_id];
  for (const auto& round : t.rounds)
    for (const auto& id : round.recorded.message_ids) {
      auto it = delivered.find(id);
      if (it == delivered.end()) ++t.undelivered_ids;
      else t.duplicate_deliveries += it->second - 1;
    }
  // Let the last group end be seen, then look for what outlived its daemon.
  t.orphans = marked_processes(mark);
  t.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

// ---- the report -----------------------------------------------------------

std::string now_utc() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return buf;
}

json to_json(const Options& o, const Totals& t) {
  json j = {{"schema_version", 1}, {"date", now_utc()}, {"seed", o.seed}, {"kills_asked", o.kills},
            {"wall_s", t.wall_s}, {"reference_wall_s", t.reference_wall_s},
            {"reference", {{"ok_runs", t.reference.ok_runs.size()}, {"flags", t.reference.flags.size()},
                           {"experiments", t.reference.experiments.size()}, {"messages", t.reference.messages.size()}}},
            {"duplicate_deliveries", t.duplicate_deliveries}, {"undelivered_messages", t.undelivered_ids},
            {"orphans", t.orphans}};
  json kills = json::array();
  for (const auto& k : t.kills) kills.push_back({{"aimed", k.aimed}, {"landed", k.landed}, {"at_s", k.at_s}});
  j["kills"] = kills;
  json rounds = json::array();
  for (const auto& r : t.rounds)
    rounds.push_back({{"mode", r.spaced ? "spaced" : "dense"}, {"kills", r.kills}, {"restarts", r.restarts}, {"requeued", r.requeued}, {"wall_s", r.wall_s},
                      {"cut_off_runs", r.recorded.cut_off_runs}, {"gave_up_jobs", r.recorded.gave_up_jobs},
                      {"problems", r.problems}, {"after_requeue", r.after_requeue}});
  j["rounds"] = rounds;
  return j;
}

std::string to_markdown(const json& j) {
  std::ostringstream m;
  m << "- date: " << j["date"].get<std::string>() << ", seed " << j["seed"] << ", " << j["kills"].size()
    << " kills in " << j["rounds"].size() << " rounds, " << static_cast<int>(j["wall_s"].get<double>()) << " s in all\n";
  m << "- the undisturbed watch: " << j["reference"]["ok_runs"] << " ok runs, " << j["reference"]["flags"]
    << " flags, " << j["reference"]["experiments"] << " experiments, " << j["reference"]["messages"]
    << " webhook messages, " << static_cast<int>(j["reference_wall_s"].get<double>()) << " s\n\n";
  std::map<std::string, std::map<std::string, int>> by;
  for (const auto& k : j["kills"]) ++by[k["aimed"].get<std::string>()][k["landed"].get<std::string>()];
  m << "| aimed at | kills | where they landed |\n|---|---|---|\n";
  for (const auto& [aimed, landed] : by) {
    int n = 0;
    std::string where;
    for (const auto& [l, c] : landed) {
      n += c;
      where += (where.empty() ? "" : "; ") + l + " " + std::to_string(c);
    }
    m << "| " << aimed << " | " << n << " | " << where << " |\n";
  }
  m << "\n| round | mode | kills | restarts | runs cut off | commits given up and re-queued | wall s | lost or wrong | "
       "evidence that differs after a re-queue |\n";
  m << "|---|---|---|---|---|---|---|---|---|\n";
  int i = 0;
  for (const auto& r : j["rounds"]) {
    std::string problems;
    for (const auto& p : r["problems"]) problems += (problems.empty() ? "" : "; ") + p.get<std::string>();
    std::string requeue;
    for (const auto& p : r["after_requeue"]) {
      // Just what differs, not every row: the first words say which.
      const std::string text = p.get<std::string>();
      requeue += (requeue.empty() ? "" : "; ") + text.substr(0, text.find(" differ"));
    }
    m << "| " << ++i << " | " << r["mode"].get<std::string>() << " | " << r["kills"] << " | " << r["restarts"] << " | " << r["cut_off_runs"] << " | "
      << r["requeued"] << " | " << static_cast<int>(r["wall_s"].get<double>()) << " | "
      << (problems.empty() ? "none" : problems) << " | " << (requeue.empty() ? "-" : requeue) << " |\n";
  }
  m << "\n- webhook messages never delivered: " << j["undelivered_messages"] << "; delivered more than once (at least "
    << "once, de-duplicated by message_id): " << j["duplicate_deliveries"] << "\n";
  m << "- processes left alive carrying the run's mark: " << j["orphans"].size() << "\n";
  return m.str();
}

bool clean(const json& j) {
  if (j["undelivered_messages"].get<long long>() != 0 || !j["orphans"].empty()) return false;
  for (const auto& r : j["rounds"])
    if (!r["problems"].empty()) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"kill -9 a real perfwatch watch at random points; check nothing is lost or duplicated"};
  app.add_option("--perfwatch", o.perfwatch, "the perfwatch executable");
  app.add_option("--bench", o.bench, "the fake bench (tests/runner/fake_bench)");
  app.add_option("--kills", o.kills, "how many kills in all")->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "the random moments' seed");
  app.add_option("--keep", o.keep, "keep the repo, databases and logs in this folder");
  app.add_flag("--check", o.check, "exit 1 unless every check holds");
  app.add_option("--markdown", o.markdown, "write the report as markdown");
  app.add_option("--json", o.json_out, "write every count as JSON");
  CLI11_PARSE(app, argc, argv);

  fs::path work = o.keep.empty() ? fs::temp_directory_path() / ("fault_kill." + std::to_string(getpid())) : fs::path(o.keep);
  try {
    fs::remove_all(work);
    fs::create_directories(work);
    Totals t = measure(o, work);
    json j = to_json(o, t);
    const std::string md = to_markdown(j);
    std::fputs(md.c_str(), stdout);
    if (!o.markdown.empty()) std::ofstream(o.markdown) << md;
    if (!o.json_out.empty()) std::ofstream(o.json_out) << j.dump(2) << '\n';
    for (const auto& orphan : t.orphans) std::fprintf(stderr, "left alive: %s\n", orphan.c_str());
    if (o.keep.empty()) fs::remove_all(work);
    return o.check && !clean(j) ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fault_kill_bench: %s\n", e.what());
    return 2;
  }
}
