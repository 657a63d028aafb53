// The scenarios: run-to-run noise x pinned baseline or not.
#pragma once

#include <string>
#include <vector>

namespace judging_e2e {

struct Scenario {
  std::string name;      // "noise3", "noise3+pin"
  double run_noise = 0;  // sigma of the per-process factor: 0.03 = 3%
  bool pinned = false;   // runs.pinned_baseline names the first commit
};

inline std::vector<Scenario> all_scenarios() {
  std::vector<Scenario> out;
  for (auto [label, noise] : {std::pair{"0.5", 0.005}, {"2", 0.02}, {"3", 0.03}, {"6", 0.06}})
    for (bool pinned : {false, true})
      out.push_back({std::string("noise") + label + (pinned ? "+pin" : ""), noise, pinned});
  return out;
}

}  // namespace judging_e2e
