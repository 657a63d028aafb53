// A commit that changes none of the manifest's paths costs nothing: it
// carries its parent's results (and so, through a chain of such commits, the
// results of the nearest commit that was measured).
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "daemon/context.h"
#include "runner/manifest.h"
#include "store/records.h"

namespace perfwatch::daemon {

// When `commit`'s manifest paths hash as its parent's do (under this
// commit's manifest) and the parent is known to the store: records that it
// inherits, logs `step=inherit`, and returns the sha whose results it now
// carries. nullopt: it must be measured (a root commit, a parent never seen,
// a watched path changed). Errors are git's or the store's.
Result<std::optional<std::string>> inherit_untouched(Context& ctx, const store::CommitRecord& commit,
                                                     const runner::Manifest& manifest);

}  // namespace perfwatch::daemon
