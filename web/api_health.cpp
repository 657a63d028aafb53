// /healthz (is the database readable?) and /metrics (Prometheus text format).
#include <cstdio>

#include "store/history_store.h"
#include "store/web_queries.h"
#include "web/api.h"

namespace perfwatch::web {

using nlohmann::json;

namespace {

// A line "name{label="value"} number".
void sample(std::string& out, const std::string& name, const std::string& labels, double value) {
  char number[64];
  std::snprintf(number, sizeof number, "%.17g", value);
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += " ";
  out += number;
  out += "\n";
}

// At most this many cells (testbed x variant x point) are exported: a sweep
// of 6 points x 18 variants on 4 testbeds is 432; the bound keeps a scrape
// and Prometheus's series count in hand whatever the database holds.
constexpr int kPointSeriesMax = 2000;

void family(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// The newest value and band of every testbed x variant x point, at most
// kPointSeriesMax cells (web/README.md says why and what then).
Status point_values(store::Database& db, std::string& out) {
  auto values = store::WebReader(db).latest_point_values(kPointSeriesMax + 1);
  if (!values) return fail(values.error());
  const bool truncated = values->size() > static_cast<std::size_t>(kPointSeriesMax);
  if (truncated) values->resize(kPointSeriesMax);
  auto labels = [](const store::LatestPointValue& v) {
    return "repo=\"" + prometheus_label(v.repo) + "\",testbed=\"" + prometheus_label(v.testbed) + "\",variant=\"" +
           prometheus_label(v.variant) + "\",point=\"" + prometheus_label(v.point_label.empty() ? v.point_key : v.point_label) +
           "\"";
  };
  family(out, "perfwatch_point_value", "gauge",
         "The newest measured commit's value of a cell: the geometric mean of its run medians, in the judged metric's unit.");
  for (const auto& v : *values)
    sample(out, "perfwatch_point_value", labels(v) + ",metric=\"" + prometheus_label(v.metric) + "\"", v.value);
  family(out, "perfwatch_point_value_runs", "gauge", "Runs (bench processes) behind perfwatch_point_value.");
  for (const auto& v : *values) sample(out, "perfwatch_point_value_runs", labels(v), static_cast<double>(v.runs));
  family(out, "perfwatch_point_value_commit_timestamp_seconds", "gauge",
         "Commit time of the commit perfwatch_point_value is of, unix seconds.");
  for (const auto& v : *values)
    sample(out, "perfwatch_point_value_commit_timestamp_seconds", labels(v), static_cast<double>(v.committed_at));
  family(out, "perfwatch_point_band_rel", "gauge",
         "The cell's noise band: relative half-width a change must leave to be flagged (0.05 = +-5%).");
  for (const auto& v : *values)
    if (v.band_rel) sample(out, "perfwatch_point_band_rel", labels(v), *v.band_rel);
  family(out, "perfwatch_point_band_calibrated", "gauge",
         "1 when the band is measured (A/A runs, unchanged commits), 0 while it is the manifest's default.");
  for (const auto& v : *values)
    if (v.band_rel) sample(out, "perfwatch_point_band_calibrated", labels(v), v.band_calibrated ? 1 : 0);
  family(out, "perfwatch_point_series_truncated", "gauge",
         "1 when there are more cells than the export's bound and the rest were left out.");
  sample(out, "perfwatch_point_series_truncated", "", truncated ? 1 : 0);
  return {};
}

}  // namespace

Result<std::string> check_commit_url(std::string_view url) {
  const auto bad = [](std::string why) {
    return fail(invalid_argument("--commit-url", why + "; give the code host's commit URL with {sha} for the sha, "
                                                       "e.g. 'https://github.com/OWNER/REPO/commit/{sha}'"));
  };
  if (!(url.starts_with("https://") || url.starts_with("http://"))) return bad("must start with https:// or http://");
  if (url.find("{sha}") == std::string_view::npos) return bad("must contain {sha}");
  if (url.size() > 500) return bad("is longer than 500 characters");
  for (unsigned char ch : url)
    if (ch <= 0x20 || ch >= 0x7f || ch == '"' || ch == '\'' || ch == '<' || ch == '>' || ch == '\\' || ch == '`')
      return bad("must be printable ASCII without spaces, quotes, backslashes or angle brackets");
  return std::string(url);
}

Reply Api::healthz(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  auto l = pool_.lease();
  if (!l) {
    std::fprintf(stderr, "perfwatch web: healthz: %s\n", l.error().to_string().c_str());
    return std::unexpected(ApiError{503, "unavailable", "", "the database cannot be read"});
  }
  return json{{"schema_version", kApiSchemaVersion},
              {"status", "ok"},
              {"database_schema_version", l->db().schema_version()},
              {"writes", writer_ != nullptr},
              {"commit_url", commit_url_.empty() ? json(nullptr) : json(commit_url_)},
              {"time", l->db().now()}};
}

Reply Api::metrics(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_STORE(m, store::HistoryReader(l.db()).metrics());
  std::string out;
  family(out, "perfwatch_jobs", "gauge", "Jobs in the queue, by state.");
  for (const auto& [state, n] : m.jobs_by_state)
    sample(out, "perfwatch_jobs", "state=\"" + std::string(store::to_string(state)) + "\"", static_cast<double>(n));
  family(out, "perfwatch_runs", "gauge", "Runs (bench processes) stored, by status.");
  for (const auto& [status, n] : m.runs_by_status)
    sample(out, "perfwatch_runs", "status=\"" + std::string(store::to_string(status)) + "\"", static_cast<double>(n));
  if (m.last_run_finished_at) {
    family(out, "perfwatch_last_run_age_seconds", "gauge", "Seconds since the newest run finished.");
    sample(out, "perfwatch_last_run_age_seconds", "",
           static_cast<double>(l.db().now() - *m.last_run_finished_at));
    family(out, "perfwatch_last_run_finished_timestamp_seconds", "gauge",
           "When the newest run finished, unix seconds.");
    sample(out, "perfwatch_last_run_finished_timestamp_seconds", "", static_cast<double>(*m.last_run_finished_at));
  }
  family(out, "perfwatch_open_regressions", "gauge", "Regression flags not acknowledged.");
  sample(out, "perfwatch_open_regressions", "", static_cast<double>(m.open_regressions));
  family(out, "perfwatch_experiments", "gauge", "Experiments on record.");
  sample(out, "perfwatch_experiments", "", static_cast<double>(m.experiments));
  if (auto s = point_values(l.db(), out); !s) return std::unexpected(from_store(s.error()));
  family(out, "perfwatch_http_requests_total", "counter", "HTTP requests served by this process.");
  sample(out, "perfwatch_http_requests_total", "", static_cast<double>(counters_.requests.load()));
  family(out, "perfwatch_http_errors_total", "counter", "HTTP responses with an error status, by class.");
  sample(out, "perfwatch_http_errors_total", "class=\"4xx\"", static_cast<double>(counters_.errors_4xx.load()));
  sample(out, "perfwatch_http_errors_total", "class=\"5xx\"", static_cast<double>(counters_.errors_5xx.load()));
  family(out, "perfwatch_http_rate_limited_total", "counter", "Expensive requests refused with 429.");
  sample(out, "perfwatch_http_rate_limited_total", "", static_cast<double>(counters_.rate_limited.load()));
  counters_.latency.write(out);
  return Body::text(std::move(out), "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace perfwatch::web
