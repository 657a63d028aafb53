#include "tests/adapters/adapter_harness.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "schemas/schema.h"
#include "tests/support/temp_dir.h"

namespace perfwatch::testing {

using nlohmann::json;
namespace fs = std::filesystem;

std::vector<json> AdapterRun::of_kind(const std::string& kind) const {
  std::vector<json> out;
  for (const auto& l : lines)
    if (l.is_object() && l.value("kind", "") == kind) out.push_back(l);
  return out;
}

std::vector<json> AdapterRun::trials(const std::string& variant, const std::string& point) const {
  std::vector<json> out;
  for (const auto& l : of_kind("trial"))
    if (l["variant"] == variant && l["point"] == point) out.push_back(l);
  return out;
}

json AdapterRun::check(const std::string& variant, const std::string& point) const {
  for (const auto& l : of_kind("check"))
    if (l["variant"] == variant && l["point"] == point) return l;
  return nullptr;
}

std::string AdapterRun::dump() const {
  std::string out = "exit " + std::to_string(exit_code) + "\nstdout:\n";
  for (const auto& l : lines) out += (l.is_string() ? l.get<std::string>() : l.dump()) + "\n";
  return out + "stderr:\n" + log;
}

json plan(const json& variants, const json& points, const json& metrics, const std::string& judged, const json& extra) {
  json p = {{"kind", "plan"},   {"schema_version", 2}, {"variants", variants},
            {"points", points}, {"metrics", metrics},  {"judged_metric", judged}};
  for (const auto& [k, v] : extra.items()) p[k] = v;
  return p;
}

json measure(const std::string& variant, const std::string& point, int trials) {
  return {{"kind", "measure"}, {"variant", variant}, {"point", point}, {"trials", trials}};
}

fs::path tests_dir() { return fs::path(PERFWATCH_SOURCE_DIR) / "tests" / "adapters"; }

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

AdapterRun run_adapter(const std::string& kind, const json& bench, const std::vector<json>& input,
                       const fs::path& workdir) {
  TempDir io("perfwatch-adapter-io");
  std::string in_text;
  for (const auto& l : input) in_text += l.dump() + "\n";
  write_file(io / "in.jsonl", in_text);
  std::string command = "cd " + shell_quote(workdir.string()) + " && ";
  if (!bench.is_null()) {
    write_file(io / "bench.json", bench.dump());
    command += "PERFWATCH_ADAPTER_BENCH=\"$(cat " + shell_quote((io / "bench.json").string()) + ")\" ";
  } else {
    command += "unset PERFWATCH_ADAPTER_BENCH; ";
  }
  command += "exec " + shell_quote(PERFWATCH_BIN) + " adapter --kind " + shell_quote(kind) + " < " +
             shell_quote((io / "in.jsonl").string()) + " > " + shell_quote((io / "out.jsonl").string()) + " 2> " +
             shell_quote((io / "err.txt").string());
  int status = std::system(command.c_str());
  AdapterRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  std::istringstream out(read_file(io / "out.jsonl"));
  std::string line;
  while (std::getline(out, line)) {
    json doc = json::parse(line, nullptr, false);
    run.lines.push_back(doc.is_discarded() ? json(line) : doc);
  }
  run.log = read_file(io / "err.txt");
  return run;
}

namespace {

const schemas::Schema* schema_for(const std::string& kind) {
  static const std::map<std::string, schemas::Schema> compiled = [] {
    std::map<std::string, schemas::Schema> m;
    for (const char* k : {"header", "variant", "check", "trial", "skipped", "footer", "error"})
      m.emplace(k, std::move(*schemas::Schema::load(std::string("bench/v2/") + k + ".schema.json")));
    return m;
  }();
  auto it = compiled.find(kind);
  return it == compiled.end() ? nullptr : &it->second;
}

}  // namespace

std::string protocol_problems(const AdapterRun& run, const std::vector<json>& input) {
  const auto& lines = run.lines;
  if (lines.empty()) return "no output";
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string at = "stdout line " + std::to_string(i + 1);
    if (!lines[i].is_object()) return at + ": not a JSON object";
    const schemas::Schema* schema = schema_for(lines[i].value("kind", ""));
    if (schema == nullptr) return at + ": unknown kind " + lines[i].value("kind", "?");
    if (auto ok = schema->validate(lines[i], at); !ok) return ok.error().to_string();
  }
  auto kind = [&](size_t i) { return lines[i]["kind"].get<std::string>(); };
  auto error_ends = [&](size_t i) -> std::string {
    if (i + 1 != lines.size()) return "an error line that is not the last";
    if (run.exit_code == 0) return "an error line, but exit 0";
    return "";
  };
  if (kind(0) == "error") return error_ends(0);
  if (kind(0) != "header") return "the first line is not the header";

  const json& p = input.at(0);
  std::set<std::string> metrics;
  for (const auto& m : p["metrics"]) metrics.insert(m["name"].get<std::string>());
  std::map<std::string, bool> feasible;
  size_t pos = 1;
  for (const auto& v : p["variants"]) {
    if (pos >= lines.size()) return "missing variant lines";
    if (kind(pos) == "error") return error_ends(pos);
    if (kind(pos) != "variant" || lines[pos]["variant"] != v["name"])
      return "line " + std::to_string(pos + 1) + ": expected the variant line of " + v["name"].dump();
    feasible[v["name"]] = lines[pos]["status"] == "ok";
    ++pos;
  }

  enum class Cell { kUnchecked, kOk, kDone };
  std::map<std::pair<std::string, std::string>, std::pair<Cell, int>> cells;  // state, trials so far
  int trial_lines = 0;
  for (size_t r = 1; r < input.size(); ++r) {
    const json& req = input[r];
    const std::string v = req["variant"], pt = req["point"];
    auto& [state, trials] = cells[{v, pt}];
    const std::string at = "request " + std::to_string(r) + " (" + v + " @ " + pt + ")";
    auto next = [&]() -> const json* { return pos < lines.size() ? &lines[pos] : nullptr; };
    const json* l = next();
    if (l == nullptr) return at + ": no answer";
    if ((*l)["kind"] == "error") return error_ends(pos);
    auto names_cell = [&](const json& line) { return line["variant"] == v && line["point"] == pt; };
    if (!feasible[v] || state == Cell::kDone) {
      if ((*l)["kind"] != "skipped" || !names_cell(*l)) return at + ": expected a skipped line, got " + l->dump();
      ++pos;
      continue;
    }
    if (state == Cell::kUnchecked) {
      if ((*l)["kind"] != "check" || !names_cell(*l)) return at + ": expected a check line, got " + l->dump();
      ++pos;
      if ((*l)["status"] != "ok") {
        state = Cell::kDone;
        continue;
      }
      state = Cell::kOk;
    }
    for (int t = 0; t < req["trials"].get<int>(); ++t) {
      l = next();
      if (l == nullptr) return at + ": missing trials";
      if ((*l)["kind"] == "error") return error_ends(pos);
      if ((*l)["kind"] == "skipped" && t == 0 && names_cell(*l)) {
        state = Cell::kDone;
        ++pos;
        break;
      }
      if ((*l)["kind"] != "trial" || !names_cell(*l)) return at + ": expected a trial line, got " + l->dump();
      if ((*l)["trial"] != trials + 1) return at + ": trial numbered " + (*l)["trial"].dump() + ", expected " + std::to_string(trials + 1);
      for (const auto& [name, _] : (*l)["metrics"].items())
        if (!metrics.contains(name)) return at + ": undeclared metric " + name;
      if (!(*l)["metrics"].contains(p["judged_metric"].get<std::string>())) return at + ": no judged metric";
      ++trials;
      ++trial_lines;
      ++pos;
    }
  }
  if (pos >= lines.size()) return "no footer";
  if (kind(pos) == "error") return error_ends(pos);
  if (kind(pos) != "footer") return "line " + std::to_string(pos + 1) + ": expected the footer, got " + lines[pos].dump();
  if (pos + 1 != lines.size()) return "lines after the footer";
  if (lines[pos]["trials"] != trial_lines) return "the footer counts " + lines[pos]["trials"].dump() + " trials, not " + std::to_string(trial_lines);
  if (run.exit_code != 0) return "a footer, but exit " + std::to_string(run.exit_code);
  return "";
}

}  // namespace perfwatch::testing
