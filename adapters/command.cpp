#include "adapters/command.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "adapters/execution.h"
#include "adapters/host.h"
#include "adapters/placeholders.h"
#include "adapters/text.h"

namespace perfwatch::adapters {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr size_t kLongestSearchedLine = 4096;  // std::regex recurses per character
constexpr std::uintmax_t kLargestHashedFile = 64u << 20;

// How one metric is read from an execution's stdout.
struct Rule {
  std::string metric;
  std::string where;                     // "bench.extract.tokens_per_s.regex"
  std::optional<std::regex> regex;
  std::string pattern;
  std::optional<json::json_pointer> pointer;
  std::string pointer_text;
  double scale = 1;
};

// The result of one execution: values, or why this cell failed. A failure
// that ends the run is an Error instead.
struct Reading {
  MetricValues values;
  std::string failure;  // empty when the values are good
  json detail;
};

bool is_assignment(const std::string& word) {
  auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    char c = word[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

// The program a command line starts, when it can be told without a shell:
// the first word after VAR=value assignments (and `exec`). nullopt for a
// shell builtin or keyword, or a word with shell syntax in it.
std::optional<std::string> program_word(const std::string& command) {
  static const std::set<std::string> shell_words = {
      "cd",    "exec", ".",     "source", "eval", "export", "set",  "unset", "trap", "ulimit", "umask",
      "wait",  "read", "alias", "command", "true", "false", ":",   "test",  "[",    "printf", "echo",
      "if",    "for",  "while", "until",  "case", "{",      "!",    "time",  "then", "do",     "return"};
  auto words = split_words(command);
  size_t i = 0;
  while (i < words.size() && is_assignment(words[i])) ++i;
  if (i < words.size() && words[i] == "exec") ++i;
  if (i >= words.size()) return std::nullopt;
  const std::string& w = words[i];
  if (shell_words.contains(w)) return std::nullopt;
  for (char c : w)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          std::string_view("_./+-,@%:").find(c) != std::string_view::npos))
      return std::nullopt;
  return w;
}

class CommandBench final : public Bench {
 public:
  CommandBench(BenchSettings settings, std::ostream& log) : settings_(std::move(settings)), log_(log) {}

  perfwatch::Status prepare(const Plan& plan) override {
    plan_ = &plan;
    if (auto ok = read_rules(plan); !ok) return ok;
    for (const auto& v : plan.variants) {
      for (const auto& p : plan.points) {
        Invocation inv;
        auto command = expand(settings_.command, v, p, "bench.command", Quoting::kShell);
        if (!command) return fail(command.error());
        inv.command = std::move(*command);
        for (const auto& [name, text] : settings_.env) {
          auto value = expand(text, v, p, "bench.env." + name);
          if (!value) return fail(value.error());
          inv.env[name] = std::move(*value);
        }
        invocations_[{v.name, p.id}] = std::move(inv);
      }
    }
    return identify_program();
  }

  json header() const override {
    json h = {{"bench", "perfwatch command adapter 1 (" + program_name_ + ")"},
              {"backend", plan_->backend},
              {"backend_reason", "the manifest's bench.backend: an adapter cannot see what the command ran on"},
              {"timer", "external"},
              {"timer_note", "values read from the command's stdout by bench.extract; one execution per trial"},
              {"device", host_device(host_facts())},
              {"build", build_}};
    return h;
  }

  VariantReport variant(const Variant& v) const override {
    std::vector<std::string> templates = {settings_.command};
    for (const auto& [_, text] : settings_.env) templates.push_back(text);
    return {true, "", unused_params(v, templates)};
  }

  perfwatch::Status measure(const Variant& v, const Point& p, Cell& cell) override {
    const Invocation& inv = invocations_.at({v.name, p.id});
    if (cell.first()) {
      auto reading = run_once(v, p, inv, "check");
      if (!reading) return fail(reading.error());
      if (!reading->failure.empty()) {
        cell.check_incorrect(reading->failure, reading->detail);
        return {};
      }
      cell.check_ok(reading->detail);
    }
    for (int i = 0; i < cell.requested(); ++i) {
      auto reading = run_once(v, p, inv, "trial");
      if (!reading) return fail(reading.error());
      if (!reading->failure.empty()) return cell.fail(reading->failure);
      if (auto ok = cell.trial(reading->values); !ok) return ok;
    }
    return {};
  }

 private:
  struct Invocation {
    std::string command;
    std::map<std::string, std::string> env;
  };

  perfwatch::Status read_rules(const Plan& plan) {
    if (!settings_.doc.contains("extract"))
      return fail(invalid_argument("bench.extract", "the command adapter reads every metric from the command's "
                                                    "output by these rules; give one for the judged metric " +
                                                        plan.judged_metric));
    for (const auto& [metric, spec] : settings_.doc["extract"].items()) {
      const std::string where = "bench.extract." + metric;
      if (plan.metric(metric) == nullptr)
        return fail(invalid_argument(where, "'" + metric + "' is not a declared metric (declared: " +
                                                plan.metric_names() + ")"));
      const bool has_regex = spec.contains("regex"), has_pointer = spec.contains("json_pointer");
      if (has_regex == has_pointer)
        return fail(invalid_argument(where, "give exactly one of regex and json_pointer"));
      Rule rule;
      rule.metric = metric;
      rule.scale = spec.value("scale", 1.0);
      if (has_regex) {
        rule.where = where + ".regex";
        rule.pattern = spec["regex"].get<std::string>();
        try {
          rule.regex.emplace(rule.pattern, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          return fail(invalid_argument(rule.where, quote(rule.pattern) +
                                                       " is not an ECMAScript regular expression: " + e.what()));
        }
        if (rule.regex->mark_count() != 1)
          return fail(invalid_argument(rule.where, quote(rule.pattern) + " has " +
                                                       std::to_string(rule.regex->mark_count()) +
                                                       " capture groups; it needs exactly one, around the number "
                                                       "(write (?:...) for a group that captures nothing)"));
      } else {
        rule.where = where + ".json_pointer";
        rule.pointer_text = spec["json_pointer"].get<std::string>();
        try {
          rule.pointer.emplace(rule.pointer_text);
        } catch (const json::exception& e) {
          return fail(invalid_argument(rule.where, quote(rule.pointer_text) +
                                                       " is not a JSON pointer (RFC 6901, e.g. /result/tokens_per_s)"));
        }
      }
      rules_.push_back(std::move(rule));
    }
    bool judged = std::any_of(rules_.begin(), rules_.end(), [&](const Rule& r) { return r.metric == plan.judged_metric; });
    if (!judged)
      return fail(invalid_argument("bench.extract", "no rule for the judged metric " + plan.judged_metric));
    return {};
  }

  // Checks that each program the commands start exists, and hashes it and
  // every file the commands name (a script given to an interpreter): the
  // build id changes when any of them does.
  perfwatch::Status identify_program() {
    std::set<fs::path> files;
    std::string first_hash;
    for (const auto& [cell, inv] : invocations_) {
      auto word = program_word(inv.command);
      if (!word) continue;
      auto program = find_program(*word, settings_.workdir);
      if (!program)
        return fail(invalid_argument(
            "bench.command", quote(*word) + ": no such program (" +
                                 (word->find('/') != std::string::npos
                                      ? "no executable file " + (settings_.workdir / *word).lexically_normal().string()
                                      : std::string("not found on PATH")) +
                                 "; the command is " + quote(inv.command) + ")"));
      if (program_name_.empty()) {
        program_name_ = *word;
        if (auto h = sha256_file(*program)) first_hash = *h;
      }
      files.insert(*program);
      auto words = split_words(inv.command);
      for (const auto& w : words) {
        std::error_code ec;
        fs::path candidate = fs::path(w).is_absolute() ? fs::path(w) : settings_.workdir / w;
        if (w.empty() || w[0] == '-' || !fs::is_regular_file(candidate, ec)) continue;
        auto size = fs::file_size(candidate, ec);
        if (!ec && size <= kLargestHashedFile) files.insert(candidate.lexically_normal());
      }
    }
    if (program_name_.empty()) program_name_ = "sh";
    std::string listing;
    for (const auto& f : files) {
      auto h = sha256_file(f);
      listing += f.string() + " " + (h ? *h : "unreadable") + "\n";
      log_ << "command adapter: build id covers " << f.string() << " " << (h ? *h : "(unreadable)") << "\n";
    }
    build_ = {{"id", files.empty() ? sha256_text("command:" + settings_.command) : sha256_text(listing)}};
    if (!first_hash.empty()) build_["binary_hash"] = first_hash;
    return {};
  }

  Result<Reading> run_once(const Variant& v, const Point& p, const Invocation& inv, const char* what) {
    runner::ProcessSpec spec;
    spec.command = inv.command;
    spec.env = inv.env;
    spec.workdir = settings_.workdir;
    spec.timeout_s = settings_.trial_timeout_s;
    Execution e = execute(spec);
    char took[32];
    std::snprintf(took, sizeof took, "%.3f", e.result.wall_s);
    log_ << "command adapter: " << v.name << " @ " << p.id << " " << what << ": " << e.shown << " "
         << e.result.describe() << " in " << took << " s";

    Reading reading;
    reading.detail = {{"command", inv.command}, {"wall_s", e.result.wall_s}};
    if (!inv.env.empty()) reading.detail["env"] = inv.env;
    using runner::Outcome;
    if (e.result.outcome == Outcome::kFailedToStart) {
      log_ << "\n";
      return fail(invalid_argument("bench.command", "cannot start " + e.shown + ": " + e.result.start_error));
    }
    if (e.result.outcome == Outcome::kExited && (e.result.exit_code == 127 || e.result.exit_code == 126)) {
      log_ << "\n";
      std::string err(last_line(e.result.tail));
      return fail(invalid_argument(
          "bench.command", e.shown + " exited with " + std::to_string(e.result.exit_code) +
                               (e.result.exit_code == 127 ? ", the shell's code for a command it cannot find"
                                                          : ", the shell's code for a file it cannot execute") +
                               (err.empty() ? "" : ": " + quote(err))));
    }
    if (!e.result.ok()) {
      log_ << stderr_tail(e) << "\n";
      reading.failure = failure(e);
      if (e.result.outcome == Outcome::kExited) reading.detail["exit_code"] = e.result.exit_code;
      return reading;
    }
    for (const auto& rule : rules_) {
      auto value = read_value(rule, e);
      if (!value) {
        log_ << "\n";
        return fail(value.error());
      }
      reading.values[rule.metric] = *value * rule.scale;
    }
    reading.detail["values"] = json(reading.values);
    log_ << ": " << describe(reading.values) << "\n";
    if (auto bad = invalid_values(*plan_, reading.values)) reading.failure = *bad + ", read from " + e.shown;
    return reading;
  }

  Result<double> read_value(const Rule& rule, const Execution& e) const {
    const auto lines = split_lines(e.out);
    auto nothing_read = [&](const std::string& what) {
      std::string context = e.out.empty()
                                ? "; it wrote nothing on stdout" + stderr_tail(e)
                                : " (" + std::to_string(lines.size()) + " lines; the last: " +
                                      quote(last_line(e.out)) + ")";
      return fail(invalid_argument(rule.where, what + context));
    };
    if (rule.regex) {
      bool found = false;
      std::string_view hit_line;
      std::string captured;
      try {
        for (const auto& line : lines) {
          if (line.size() > kLongestSearchedLine) continue;
          std::match_results<std::string_view::const_iterator> m;
          if (std::regex_search(line.begin(), line.end(), m, *rule.regex) && m[1].matched) {
            found = true;
            hit_line = line;
            captured = m[1].str();
          }
        }
      } catch (const std::regex_error& err) {
        return fail(invalid_argument(rule.where, quote(rule.pattern) + " failed on the output of " + e.shown +
                                                     ": " + err.what()));
      }
      if (!found)
        return nothing_read(quote(rule.pattern) + " matches no line " + e.shown + " wrote on stdout");
      auto number = parse_number(captured);
      if (!number)
        return fail(invalid_argument(rule.where, "captured " + quote(captured) + ", which is not a number, from " +
                                                     "the line " + quote(hit_line) + " of " + e.shown));
      return *number;
    }
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      std::string_view line = *it;
      size_t b = line.find_first_not_of(" \t");
      if (b == std::string_view::npos || line[b] != '{') continue;
      json doc = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded() || !doc.is_object()) continue;
      if (!doc.contains(*rule.pointer))
        return fail(invalid_argument(rule.where, quote(rule.pointer_text) + " is not in the JSON line " +
                                                     quote(line) + " of " + e.shown));
      const json& value = doc.at(*rule.pointer);
      if (!value.is_number())
        return fail(invalid_argument(rule.where, quote(rule.pointer_text) + " is " +
                                                     value.dump(-1, ' ', false, json::error_handler_t::replace) +
                                                     " (" + value.type_name() + "), not a number, in the JSON line " +
                                                     quote(line) + " of " + e.shown));
      return value.get<double>();
    }
    return nothing_read("no line " + e.shown + " wrote on stdout is a JSON object");
  }

  BenchSettings settings_;
  std::ostream& log_;
  const Plan* plan_ = nullptr;
  std::vector<Rule> rules_;
  std::map<std::pair<std::string, std::string>, Invocation> invocations_;
  std::string program_name_;
  json build_;
};

}  // namespace

std::unique_ptr<Bench> make_command_bench(BenchSettings settings, std::ostream& log) {
  return std::make_unique<CommandBench>(std::move(settings), log);
}

}  // namespace perfwatch::adapters
