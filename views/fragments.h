// How the store's records appear inside the documents the views build (the
// API's answers and the CLI's --json): one function per record, the shapes
// of the definitions in schemas/api/common.schema.json. Optional values
// become null; every text is passed through as data (escaping is the
// printer's job: the dashboard only ever sets textContent).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/analysis_store.h"
#include "store/experiment_store.h"
#include "store/history_store.h"
#include "store/queue_store.h"
#include "store/records.h"
#include "store/run_store.h"
#include "views/lookup.h"

namespace perfwatch::views {

// The schema_version every document of the views carries (the API's answers
// and the CLI's --json; schemas/api/). A change that breaks a reader
// increments it: 2 named the pooled value geomean_of_run_medians and typed
// the jobs' progress; 3 made a point its named axes and a run's cells carry
// every declared metric.
inline constexpr int kSchemaVersion = 3;

// A commit in a list: id, sha, short sha, subject, author, time, inheritance,
// trailers. `inherited_from_sha` is the sha of the commit whose results it
// carries (empty: none).
nlohmann::json commit_brief(const store::CommitRecord& commit, const std::string& inherited_from_sha = "");
// Everything, the full message included.
nlohmann::json commit_full(const store::CommitRecord& commit, const std::string& inherited_from_sha = "");

nlohmann::json point_json(const store::PointRecord& point);
nlohmann::json band_json(const store::NoiseBandRecord& band);
// The band used when none is stored: the manifest's default, uncalibrated.
nlohmann::json default_band_json(double band_rel);
// With the point's label when `label` is given (the users' "C64").
nlohmann::json flag_json(const store::FlagView& flag, const std::string& label = "");
nlohmann::json flag_brief(const store::FlagRecord& flag);
nlohmann::json experiment_json(const store::ExperimentRecord& experiment);
// `paired`: the evidence of a variant A/B inside one commit (an auto experiment).
nlohmann::json evidence_json(const store::EvidenceView& row, const std::string& point_label = "", bool paired = false);
nlohmann::json run_json(const store::RunRecord& run, bool with_tails);
nlohmann::json build_json(const store::BuildRecord& build);
nlohmann::json testbed_json(const store::TestbedRecord& testbed);
nlohmann::json variant_json(const store::VariantRecord& variant);
nlohmann::json summary_json(const store::SummaryRecord& summary);
nlohmann::json check_json(const store::CheckRecord& check);
nlohmann::json job_json(const store::JobRecord& job);
nlohmann::json annotation_json(const store::AnnotationRecord& note);
nlohmann::json comparison_json(const store::ComparisonRecord& comparison);
// A commit's pooled value at a point: {"geomean_of_run_medians", "ci_low",
// "ci_high", "runs"} (the geometric mean of its runs' medians and its 95% CI).
nlohmann::json pooled_json(const store::CommitSummaryRecord& pooled);

// The band and the test that decided a comparison (common.schema.json
// judged_by): {"band_rel", "band": "measured" | "default" | "unknown",
// "test": analysis::test_name or null when unknown, "alpha"}. `calibrated`
// nullopt: judged before the store kept it.
nlohmann::json judged_by_json(const std::optional<double>& band_rel, const std::optional<bool>& calibrated,
                              bool paired = false);

// An optional number as JSON (null when absent or not finite).
nlohmann::json number_or_null(const std::optional<double>& value);

}  // namespace perfwatch::views
