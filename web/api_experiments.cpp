// Experiments and negative results: search by text, verdict, source,
// parameter, group, commit and date, each with its evidence table
// (views/experiment_view.h).
#include "views/experiment_view.h"
#include "views/investigation_view.h"
#include "web/api.h"

namespace perfwatch::web {

Reply Api::experiments(const httplib::Request& request) {
  QueryParams q(request.params,
                {"repo", "q", "verdict", "source", "param", "group", "commit", "testbed", "since", "until", "limit",
                 "offset", "evidence"},
                {"param"});
  views::ExperimentsRequest r;
  r.repo = q.id("repo");
  r.text = q.text("q", 200).value_or("");
  auto verdict = q.word("verdict", {"accepted", "rejected", "mixed", "no_effect", "pending"});
  auto source = q.word("source", {"auto", "trailer", "manual"});
  r.params = q.all_names("param");
  r.group = q.name("group").value_or("");
  r.commit = q.sha("commit");
  r.testbed = q.id("testbed");
  r.since = q.optional_integer("since", 0, 1LL << 40);
  r.until = q.optional_integer("until", 0, 1LL << 40);
  r.limit = static_cast<int>(q.integer("limit", r.limit, 1, views::kExperimentsLimitMax));
  r.offset = static_cast<int>(q.integer("offset", 0, 0, 1000000));
  r.evidence = q.boolean("evidence", true);
  WEB_CHECK_PARAMS(q);
  if (verdict) r.verdict = store::parse_experiment_verdict(*verdict);
  if (source) r.source = store::parse_experiment_source(*source);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::experiments_view(l.db(), r));
  return views::experiments_document(view);
}

Reply Api::experiment(const httplib::Request& request) {
  QueryParams q(request.params, {});
  WEB_CHECK_PARAMS(q);
  auto id = parse_id(request.matches[1].str());
  if (!id) return std::unexpected(parse_id_error("experiment"));
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::experiment_view(l.db(), *id));
  return views::experiment_document(view);
}

// Experiments grouped by investigation, newest first, each with its
// current verdict and the verdicts before it (views/investigation_view.h).
Reply Api::investigations(const httplib::Request& request) {
  QueryParams q(request.params, {"repo", "q", "limit"});
  views::InvestigationsRequest r;
  r.repo = q.id("repo");
  r.text = q.text("q", 200).value_or("");
  r.limit = static_cast<int>(q.integer("limit", r.limit, 1, views::kInvestigationsLimitMax));
  WEB_CHECK_PARAMS(q);
  WEB_TRY(l, lease(pool_));
  WEB_TRY_VIEW(view, views::investigations_view(l.db(), r));
  return views::investigations_document(view);
}

}  // namespace perfwatch::web
