// Browsing across commits and testbeds: two commits compared
// (views/compare_view.h) and the testbeds that measured the repo
// (views/testbeds_view.h).
#include "views/compare_view.h"
#include "views/testbeds_view.h"
#include "web/api.h"

namespace perfwatch::web {

Reply Api::compare(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "a", "b", "testbed", "metric"});
  views::CompareRequest r;
  r.repo = q.id("repo");
  auto a = q.sha("a");
  auto b = q.sha("b");
  r.testbed = q.id("testbed");
  r.metric = q.name("metric");
  WEB_CHECK_PARAMS(q);
  r.a = a.value_or("");
  r.b = b.value_or("");
  WEB_TRY(l, lease(pool_));
  // One snapshot for the whole document, even while the daemon writes.
  store::Transaction snapshot(l.db(), store::Transaction::Mode::kDeferred);
  if (!snapshot.status()) return std::unexpected(from_store(snapshot.status().error()));
  WEB_TRY_VIEW(doc, views::compare_document(l.db(), r));
  return std::move(doc);
}

Reply Api::testbeds(const httplib::Request& request) {
  QueryParams q(request.params, {"repo"});
  auto repo = q.id("repo");
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(doc, views::testbeds_document(l.db(), repo));
  return std::move(doc);
}

}  // namespace perfwatch::web
