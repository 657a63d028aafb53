// The webhook outbox: every message with its state, attempts and last error
// (views/webhooks_view.h).
#include "views/webhooks_view.h"
#include "web/api.h"

namespace perfwatch::web {

Reply Api::webhooks(const httplib::Request& request) {
  QueryParams q(request.params, {"state", "flag", "limit", "offset"});
  views::WebhooksRequest r;
  auto state = q.word("state", {"pending", "delivered", "failed", "any"});
  r.flag = q.id("flag");
  r.limit = static_cast<int>(q.integer("limit", r.limit, 1, views::kWebhooksLimitMax));
  r.offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  WEB_CHECK_PARAMS(q);
  if (state && *state != "any") r.state = store::parse_outbox_state(*state);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::webhooks_view(l.db(), r));
  return views::webhooks_document(view);
}

}  // namespace perfwatch::web
