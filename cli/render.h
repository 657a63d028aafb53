// What the query commands print for people: tables a kernel engineer reads
// at a glance. (--json output uses the web API's shapes, web/json_views.h.)
#pragma once

#include <string>
#include <vector>

#include "store/analysis_store.h"
#include "store/experiment_store.h"
#include "store/history_store.h"
#include "store/records.h"
#include "store/run_store.h"

namespace perfwatch::cli {

// "+12.3%"
std::string signed_percent(double rel, int decimals = 1);
// "num_warps=8 num_stages=3": the candidate's params that differ from the baseline's (all when none differ).
std::string params_diff(const nlohmann::json& baseline_params, const nlohmann::json& candidate_params);

// One line per candidate: "num_warps=8 REJECTED: +14.2..+18.0% time_us at b1_h16_k2048_bf16, b8_...;
// no effect at 4 points". Pending experiments say so.
std::vector<std::string> experiment_headlines(const store::ExperimentDetail& detail);

// The experiment, its headline(s), its evidence table (point, baseline,
// candidate, delta, band, p, runs, verdict) and its conclusion.
std::string experiment_text(const store::ExperimentDetail& detail);

// "regression" rows first... one line per flag.
std::string flags_text(const std::vector<store::FlagView>& flags);

std::string history_text(const store::PointHistory& history, double default_band);

// A verdict word for people: "worse", "better", "no effect", "undecided".
std::string evidence_word(store::ChangeVerdict verdict);

}  // namespace perfwatch::cli
