// The JSON API's handlers, one per route (web/README.md lists them; each
// response is described by a schema in schemas/api/). A handler reads what
// it needs through a leased read-only connection and returns the document or
// an ApiError; it never sees a socket and never writes a response itself.
#pragma once

#include <string>

#include <httplib.h>

#include "store/read_pool.h"
#include "views/fragments.h"
#include "web/api_error.h"
#include "web/api_support.h"
#include "web/route_latency.h"

namespace perfwatch::web {

// Counters the server keeps and /metrics shows.
struct ServerCounters {
  std::atomic<std::int64_t> requests{0};
  std::atomic<std::int64_t> errors_4xx{0};
  std::atomic<std::int64_t> errors_5xx{0};
  std::atomic<std::int64_t> rate_limited{0};
  RouteLatency latency;  // per route pattern; routes are added before serving
};

class Api {
 public:
  // `writer` is null when writes are refused (read-only server, no token).
  // `commit_url`: the code host's URL of a commit with {sha} in place of
  // its sha (checked by check_commit_url), or "" for none.
  Api(store::ReadPool& pool, Writer* writer, const ServerCounters& counters, std::string commit_url = "")
      : pool_(pool), writer_(writer), counters_(counters), commit_url_(std::move(commit_url)) {}

  Reply healthz(const httplib::Request& request);
  // Prometheus text exposition format (not JSON): the reply holds a string.
  Reply metrics(const httplib::Request& request);

  Reply repos(const httplib::Request& request);
  Reply commits(const httplib::Request& request);
  Reply commit(const httplib::Request& request);          // matches[1] = sha
  Reply series(const httplib::Request& request);
  Reply history(const httplib::Request& request);
  Reply ab(const httplib::Request& request);
  Reply compare(const httplib::Request& request);         // two commits: ?a=SHA&b=SHA
  Reply testbeds(const httplib::Request& request);
  Reply run(const httplib::Request& request);             // matches[1] = run id
  Reply compare_runs(const httplib::Request& request);    // matches[1], [2] = run ids
  Reply jobs(const httplib::Request& request);
  // POST; as acknowledge. matches[1] = a commit's sha (or prefix); body
  // {"by": ...} or empty (schemas/api/requeue_request.schema.json).
  Reply requeue(const httplib::Request& request, const std::string& body);
  Reply webhooks(const httplib::Request& request);
  Reply flags(const httplib::Request& request);
  Reply flag(const httplib::Request& request);            // matches[1] = flag id
  // POST; the caller has checked the bearer token and read the body (under
  // the size limit). matches[1] = flag id; body {"reason": ..., "by": ...}
  // (schemas/api/acknowledge_request.schema.json).
  Reply acknowledge(const httplib::Request& request, const std::string& body);
  // Alert groups: the flags of a commit x testbed with their summary.
  Reply alert_groups(const httplib::Request& request);
  // POST; as acknowledge. matches[1] = a commit's sha (or prefix); body
  // schemas/api/triage_request.schema.json.
  Reply triage_group(const httplib::Request& request, const std::string& body);
  Reply experiments(const httplib::Request& request);
  Reply investigations(const httplib::Request& request);  // experiments grouped by investigation
  Reply experiment(const httplib::Request& request);      // matches[1] = experiment id

 private:
  store::ReadPool& pool_;
  Writer* writer_;
  const ServerCounters& counters_;
  std::string commit_url_;
};

// A code host's commit URL template as `--commit-url` gives it: http(s), with
// "{sha}" where the commit's sha goes, no whitespace, quotes or angle
// brackets. Returns it; kInvalidArgument "--commit-url" saying what is wrong.
Result<std::string> check_commit_url(std::string_view url_template);

// The schema_version every API document carries: the views' (the CLI's
// --json answers carry the same).
inline constexpr int kApiSchemaVersion = views::kSchemaVersion;

}  // namespace perfwatch::web
