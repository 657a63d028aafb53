// A run's table -- variant x point: median, 95% CI, trials, tokens/s and the
// change against the baseline variant -- for people (text) and tools (JSON).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/records.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

struct RunReportContext {
  store::CommitRecord commit;
  std::string metric = "time_us";
  bool lower_is_better = true;
};

// Plain text, one line per variant x point, grouped by point.
std::string render_run_text(const store::RunTable& table, const RunReportContext& context);

// {"run": {...}, "commit": {...}, "variants": [...], "points": [...], "cells": [...]}
nlohmann::json render_run_json(const store::RunTable& table, const RunReportContext& context);

}  // namespace perfwatch::daemon
