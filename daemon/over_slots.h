// A fixed number of like tasks over an executor testbed's slots: the A/A
// runs of a noise calibration spread over a machine's GPUs.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "common/result.h"
#include "daemon/executor.h"
#include "store/database.h"

namespace perfwatch::daemon {

// Runs task(k, db, slot) for k in [0, n): with one slot in order, through
// `db`; else one task a slot at a time, in parallel, each worker through a
// connection of its own to `db`'s file (a Database is one thread's). No task
// starts after one returned an error; the first error is returned once the
// started ones have ended.
using SlotTask = std::function<Status(int k, store::Database& db, const Slot& slot)>;
Status over_slots(store::Database& db, const std::vector<std::shared_ptr<const Slot>>& slots, int n,
                  const SlotTask& task);

}  // namespace perfwatch::daemon
