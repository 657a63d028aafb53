// A point's history for one variant: the request's parameters into a
// views::HistoryRequest; the view builds and prints the document
// (views/history_view.h). Served from indexed SQL (summaries and
// commit_summaries, never trials): see benchmarks/web_history_bench.cpp.
#include "views/history_view.h"
#include "web/api.h"

namespace perfwatch::web {

Reply Api::history(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "branch", "variant", "point", "testbed", "limit", "metric"});
  views::HistoryRequest r;
  r.repo = q.id("repo");
  r.branch = q.name("branch");
  auto variant = q.name("variant");
  auto point = q.text("point", 200);  // a label, a key or axes: any printable text
  r.testbed = q.id("testbed");
  r.metric = q.name("metric");
  r.limit = static_cast<int>(q.integer("limit", r.limit, 1, views::kHistoryLimitMax));
  WEB_CHECK_PARAMS(q);
  r.variant = variant.value_or("");
  r.point = point.value_or("");
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::history_view(l.db(), r));
  return Body::text(views::history_document(view));
}

}  // namespace perfwatch::web
