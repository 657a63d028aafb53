#include "daemon/slurm.h"

#include <sstream>

#include "runner/process.h"

namespace perfwatch::daemon {

namespace {

// "JobId=12 JobName=x ... JobState=CANCELLED Reason=None ..." -> the value of `key`.
std::string field(const std::string& line, const std::string& key) {
  const std::string k = key + "=";
  for (std::size_t at = line.find(k); at != std::string::npos; at = line.find(k, at + 1)) {
    if (at != 0 && line[at - 1] != ' ') continue;  // "ReqNodeList=" is not "NodeList="
    const std::size_t begin = at + k.size();
    const std::size_t end = line.find(' ', begin);
    return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  return "";
}

runner::Captured run_tool(std::vector<std::string> argv) {
  runner::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_s = 30;
  return runner::run_captured(spec);
}

}  // namespace

std::string SlurmSlot::label() const { return config_.name + "/" + std::to_string(index_); }

Placement SlurmSlot::place(const std::string& name, bool build) const {
  Placement p;
  p.launcher = {"srun", "--partition=" + config_.partition, "--job-name=" + name, "--ntasks=1", "--quiet",
                "--kill-on-bad-exit=1"};
  // A build needs the node's toolchain, not its GPU.
  if (!build && !config_.gres.empty()) p.launcher.push_back("--gres=" + config_.gres);
  if (!config_.time_limit.empty()) p.launcher.push_back("--time=" + config_.time_limit);
  p.launcher.insert(p.launcher.end(), config_.srun_args.begin(), config_.srun_args.end());
  p.launcher.push_back("--");
  p.where = {{"executor", "slurm"}, {"testbed", config_.name}, {"slot", index_}, {"partition", config_.partition},
             {"job_name", name}};
  if (!build) p.where["gres"] = config_.gres;
  // The testbed is the partition's kind of node, whichever node ran the job.
  p.testbed_name = config_.name;
  p.testbed_host = "slurm:" + config_.partition;
  return p;
}

Ending SlurmSlot::ended(const std::string& name) const {
  Ending e;
  auto shown = run_tool({"scontrol", "-o", "show", "job"});
  if (!shown.result.ok()) return e;  // Slurm says nothing: the run's own status stands
  auto job = find_slurm_job(shown.out, name);
  if (!job) return e;
  e.where = {{"slurm_job_id", job->id}, {"slurm_state", job->state}, {"node", job->node}};
  if (auto why = lost_reason(*job)) {
    e.lost = "slurm job " + std::to_string(job->id) + " on " + (job->node.empty() ? "no node" : job->node) + " " +
             *why + (job->reason.empty() || job->reason == "None" ? "" : " (" + job->reason + ")");
  }
  return e;
}

std::optional<SlurmJob> find_slurm_job(const std::string& output, const std::string& name) {
  std::optional<SlurmJob> newest;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (field(line, "JobName") != name) continue;
    SlurmJob j;
    try {
      j.id = std::stoll(field(line, "JobId"));
    } catch (...) {
      continue;
    }
    j.name = name;
    j.state = field(line, "JobState");
    j.reason = field(line, "Reason");
    j.node = field(line, "NodeList");
    if (j.node == "(null)") j.node.clear();
    j.exit_code = field(line, "ExitCode");
    if (!newest || j.id > newest->id) newest = j;
  }
  return newest;
}

std::optional<std::string> lost_reason(const SlurmJob& job) {
  for (const char* s : {"CANCELLED", "PREEMPTED", "NODE_FAIL", "TIMEOUT", "BOOT_FAIL", "DEADLINE"}) {
    if (job.state.rfind(s, 0) == 0) return job.state;
  }
  return std::nullopt;
}

Status check_slurm_partition(const std::string& partition, const std::string& where) {
  auto shown = run_tool({"scontrol", "-o", "show", "partition", partition});
  if (shown.result.outcome == runner::Outcome::kFailedToStart) {
    return fail(invalid_argument(where, "cannot run scontrol (" + shown.result.start_error +
                                            "): install Slurm's client tools (slurm-client) on this machine"));
  }
  if (!shown.result.ok() || shown.out.find("PartitionName=" + partition) == std::string::npos) {
    std::string said = shown.result.tail.empty() ? shown.out : shown.result.tail;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    return fail(invalid_argument(where, "Slurm has no partition '" + partition + "'" +
                                            (said.empty() ? "" : " (scontrol: " + said + ")") +
                                            "; `sinfo -s` lists the partitions"));
  }
  return {};
}

}  // namespace perfwatch::daemon
