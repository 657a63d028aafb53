// Row identities and time, shared by every store header.
//
// Ids are SQLite rowids: positive, assigned by the store, never reused for
// another row of the same table. 0 means "not assigned yet" in a record that
// has not been written.
#pragma once

#include <cstdint>

namespace perfwatch::store {

using RowId = std::int64_t;
using RepoId = RowId;
using CommitId = RowId;
using BuildId = RowId;
using TestbedId = RowId;
using RunId = RowId;
using VariantId = RowId;  // a variant *of one run* (run_variants row)
using PointId = RowId;
using JobId = RowId;
using ComparisonId = RowId;
using FlagId = RowId;
using ExperimentId = RowId;
using AnnotationId = RowId;

// Seconds since the Unix epoch, UTC. Every *_at field of the store uses it.
using UnixSeconds = std::int64_t;

}  // namespace perfwatch::store
