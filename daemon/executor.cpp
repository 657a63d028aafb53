#include "daemon/executor.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/text.h"
#include "daemon/slurm.h"
#include "runner/process.h"
#include "schemas/schema.h"

namespace perfwatch::daemon {

namespace {

class LocalSlot final : public Slot {
 public:
  std::string label() const override { return "local"; }
  Placement place(const std::string&, bool) const override { return {}; }
};

// One GPU: the bench sees only it. Builds need no GPU and run unpinned.
class GpuSlot final : public Slot {
 public:
  GpuSlot(Gpu gpu, std::string host) : gpu_(std::move(gpu)), host_(std::move(host)) {}
  std::string label() const override { return "gpu " + std::to_string(gpu_.index) + " (" + gpu_.uuid + ")"; }
  Placement place(const std::string&, bool build) const override {
    Placement p;
    if (build) return p;
    // By UUID, not index: CUDA's order can differ from nvidia-smi's
    // (CUDA_DEVICE_ORDER), a UUID names one card whatever the order.
    p.env["CUDA_VISIBLE_DEVICES"] = gpu_.uuid;
    p.where = {{"executor", "local-gpus"}, {"gpu_index", gpu_.index}, {"gpu_uuid", gpu_.uuid}, {"gpu_name", gpu_.name}};
    p.device_uuid = gpu_.uuid;
    // The GPUs of one model are one testbed; named as the local executor
    // names it, so a history measured on one GPU goes on.
    p.testbed_name = "{host}/{backend}/" + gpu_.name;
    p.testbed_host = host_;
    return p;
  }

 private:
  Gpu gpu_;
  std::string host_;
};

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

Result<Executor> local_gpus(const nlohmann::json& config, const std::string& where, const std::string& host) {
  const std::string smi = config.value("nvidia_smi", std::string("nvidia-smi"));
  runner::ProcessSpec spec;
  spec.argv = {smi, "--query-gpu=index,uuid,name", "--format=csv,noheader"};
  spec.timeout_s = 60;
  auto listed = runner::run_captured(spec);
  if (!listed.result.ok()) {
    return fail(invalid_argument(where + ": executor local-gpus",
                                 "cannot list the GPUs with `" + smi + " --query-gpu=index,uuid,name --format=csv,noheader`: " +
                                     listed.result.describe() + " -- is the NVIDIA driver installed? (or use \"executor\": \"local\")"));
  }
  auto gpus = parse_gpu_list(listed.out);
  if (!gpus) return fail(invalid_argument(where + ": " + smi, gpus.error().message));
  if (gpus->empty()) return fail(invalid_argument(where + ": executor local-gpus", smi + " lists no GPU"));
  if (config.contains("gpus") && config["gpus"].is_array()) {
    std::set<int> wanted = config["gpus"].get<std::set<int>>();
    std::vector<Gpu> kept;
    for (const auto& g : *gpus)
      if (wanted.erase(g.index)) kept.push_back(g);
    if (!wanted.empty()) {
      std::string have;
      for (const auto& g : *gpus) have += (have.empty() ? "" : ", ") + std::to_string(g.index);
      return fail(invalid_argument(where + ": gpus", "GPU " + std::to_string(*wanted.begin()) +
                                                         " is not on this machine (it has " + have + ")"));
    }
    *gpus = std::move(kept);
  }
  // One testbed per model, in the order the models first appear.
  Executor e;
  e.kind = "local-gpus";
  std::map<std::string, std::size_t> by_model;
  std::vector<std::string> indices;
  for (const auto& g : *gpus) {
    auto [it, added] = by_model.emplace(g.name, e.testbeds.size());
    if (added) {
      e.testbeds.push_back({g.name, "", {}, 3});
      indices.emplace_back();
    }
    e.testbeds[it->second].slots.push_back(std::make_shared<GpuSlot>(g, host));
    indices[it->second] += (indices[it->second].empty() ? "" : ",") + std::to_string(g.index);
  }
  for (std::size_t k = 0; k < e.testbeds.size(); ++k) {
    auto& t = e.testbeds[k];
    t.description = std::to_string(t.slots.size()) + " x " + t.name + " (gpus " + indices[k] + ")";
  }
  // With one model there is one testbed: the queue's unnamed one, as local's.
  if (e.testbeds.size() == 1) e.testbeds.front().name.clear();
  return e;
}

Result<Executor> slurm(const nlohmann::json& config, const std::string& where) {
  Executor e;
  e.kind = "slurm";
  std::set<std::string> names;
  for (std::size_t i = 0; i < config["testbeds"].size(); ++i) {
    const auto& t = config["testbeds"][i];
    const std::string at = where + ": testbeds[" + std::to_string(i) + "]";
    SlurmTestbedConfig c;
    c.name = t["name"].get<std::string>();
    if (!names.insert(c.name).second) return fail(invalid_argument(at + ".name", "testbed '" + c.name + "' is named twice"));
    c.partition = t["partition"].get<std::string>();
    c.gres = t.value("gres", std::string("gpu:1"));
    c.time_limit = t.value("time_limit", std::string());
    c.srun_args = t.value("srun_args", std::vector<std::string>{});
    if (auto s = check_slurm_partition(c.partition, at + ".partition"); !s) return fail(s.error());
    ExecutorTestbed bed;
    bed.name = c.name;
    const int slots = t.value("slots", 1);
    bed.description = "slurm partition " + c.partition + ", gres " + c.gres + ", " + std::to_string(slots) +
                      (slots == 1 ? " slot" : " slots");
    bed.max_lost = t.value("max_lost", 3);
    for (int k = 0; k < slots; ++k) bed.slots.push_back(std::make_shared<SlurmSlot>(c, k));
    e.testbeds.push_back(std::move(bed));
  }
  return e;
}

}  // namespace

Executor local_executor() {
  Executor e;
  e.testbeds.push_back({"", "this machine", {std::make_shared<LocalSlot>()}, 3});
  return e;
}

Result<std::vector<Gpu>> parse_gpu_list(const std::string& text) {
  std::vector<Gpu> out;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (trim(line).empty()) continue;
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(trim(cell));
    if (cells.size() != 3) {
      return fail(invalid_argument("line " + std::to_string(n),
                                   "expected 'index, uuid, name', got '" + line + "'"));
    }
    Gpu g;
    try {
      std::size_t used = 0;
      g.index = std::stoi(cells[0], &used);
      if (used != cells[0].size() || g.index < 0) throw std::invalid_argument(cells[0]);
    } catch (const std::exception&) {
      return fail(invalid_argument("line " + std::to_string(n), "'" + cells[0] + "' is not a GPU index"));
    }
    g.uuid = cells[1];
    g.name = cells[2];
    if (g.uuid.empty() || g.name.empty())
      return fail(invalid_argument("line " + std::to_string(n), "a GPU without a UUID or a name: '" + line + "'"));
    out.push_back(std::move(g));
  }
  return out;
}

Result<Executor> make_executor(const nlohmann::json& config, const std::string& where, const std::string& host) {
  auto schema = schemas::Schema::load("executor.schema.json");
  if (!schema) return fail(schema.error());
  if (auto ok = schema->validate(config, where); !ok) return fail(ok.error());
  const std::string kind = config["executor"].get<std::string>();
  if (kind == "local-gpus") return local_gpus(config, where, host);
  if (kind == "slurm") return slurm(config, where);
  return local_executor();
}

Result<Executor> load_executor(const std::filesystem::path& file, const std::string& host) {
  std::ifstream in(file);
  if (!in) return fail(not_found(file.string(), "cannot read the executor config"));
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    return fail(invalid_argument(file.string(), std::string("not JSON: ") + e.what()));
  }
  return make_executor(config, file.string(), host);
}

}  // namespace perfwatch::daemon
