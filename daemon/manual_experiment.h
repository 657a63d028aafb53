// Experiments made by hand (`perfwatch experiment add`): a hypothesis, a
// baseline and candidates, each a commit (any revision) or a variant of the
// manifest ("variant:NAME", measured inside the runs of one commit). The
// evidence comes from the runs stored so far: commits are compared by their
// run medians (unpaired, as commits are), variants pairwise within each run
// (paired, as the daemon's automatic A/B). With nothing measured yet the
// experiment is `pending`; it can be concluded by hand either way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "daemon/context.h"
#include "store/records.h"

namespace perfwatch::daemon {

struct ManualExperiment {
  std::string hypothesis;
  std::string baseline;                 // a revision, or "variant:NAME"
  std::vector<std::string> candidates;  // the same kind as the baseline
  std::string commit = "HEAD";          // whose runs compare variants
  std::string group;                    // an investigation to file it under
};

// Stores the experiment with its evidence and returns its id. Errors name
// the flag that is wrong (a revision that does not resolve, a mix of
// commits and variants, an unknown variant).
Result<store::ExperimentId> record_manual_experiment(Context& ctx, const ManualExperiment& request);

}  // namespace perfwatch::daemon
