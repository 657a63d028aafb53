#include "daemon/notify.h"

#include <cstdio>
#include <optional>

#include "daemon/webhook_outbox.h"
#include "judge/commit_runs.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

using nlohmann::json;

namespace {

std::string signed_percent(double rel) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * rel);
  return buf;
}

const char* webhook_event(const judge::FlagEvent& e) {
  const bool withdrawn = e.what == judge::FlagEvent::What::kWithdrawn;
  switch (e.flag.kind) {
    case store::FlagKind::kChangepoint: return withdrawn ? "changepoint_regression_withdrawn" : "changepoint_regression";
    case store::FlagKind::kDrift: return withdrawn ? "drift_regression_withdrawn" : "drift_regression";
    default: return withdrawn ? "regression_withdrawn" : "regression";
  }
}

class Announcer {
 public:
  Announcer(Context& ctx, const runner::Manifest& manifest, const store::CommitRecord& commit,
            const std::string& branch)
      : ctx_(ctx), manifest_(manifest), commit_(commit), branch_(branch), names_(ctx.db) {}

  void comparison(const judge::ComparisonTally& t) {
    auto e = ctx_.log.event("compare");
    e.commit(t.commit_sha).add("against", t.against_sha.substr(0, 10)).add("basis", t.basis);
    for (const auto& [verdict, n] : t.verdicts) e.add(verdict, n);
  }

  void flag(const judge::FlagEvent& f) {
    const std::string point = names_.key(f.flag.point_id);
    const std::string sha = sha_of(f.flag.commit_id);
    const std::string basis = f.flag.detail.value("basis", "previous");
    auto e = ctx_.log.event("flag");
    e.commit(sha)
        .add("kind", std::string(store::to_string(f.flag.kind)))
        .add("id", static_cast<long long>(f.flag.id))
        .add("variant", f.flag.variant)
        .add("point", point)
        .add("delta", signed_percent(f.flag.magnitude_rel))
        .add("p", f.comparison.p_value)
        .add("band", "+-" + signed_percent(f.comparison.band_rel).substr(1))
        .add("new", f.what == judge::FlagEvent::What::kRaised ? "yes" : "no")
        .add("event", judge::to_string(f.what))
        .add("basis", basis)
        .add("testbed", testbed_name(f.flag.testbed_id));
    if (f.flag.kind == store::FlagKind::kDrift) {
      e.add("started_at", f.flag.detail.value("started_at", "").substr(0, 10));
      e.add("left_band_at", f.flag.detail.value("left_band_at", "").substr(0, 10));
    }
    if (!f.reason.empty()) e.add("reason", f.reason);
  }

  // The message for a flag event, if it is one that people are told of.
  std::optional<store::OutboxMessage> webhook(const judge::FlagEvent& f) {
    if (!ctx_.webhook) return std::nullopt;
    auto body = webhook_body(f, sha_of(f.flag.commit_id), names_.key(f.flag.point_id));
    if (!body) return std::nullopt;
    store::OutboxMessage m;
    m.url = ctx_.webhook->url();
    m.event = (*body)["event"].get<std::string>();
    m.flag_id = f.flag.id;
    m.commit_sha = sha_of(f.flag.commit_id);
    m.body = std::move(*body);
    return m;
  }

  void experiment(const judge::ExperimentNote& x) {
    auto e = ctx_.log.event("experiment");
    e.commit(commit_.sha).add("id", static_cast<long long>(x.id)).add("source", x.source);
    if (x.source == "auto") e.add("candidate", x.candidate).add("verdict", x.verdict);
  }

  void confirm(const judge::ConfirmRequest& r) {
    ctx_.log.event("changepoint")
        .commit(r.change_point_sha)
        .add("variant", r.cell.variant)
        .add("point", r.point_key)
        .add("p", r.change_point.p_value)
        .add("change", signed_percent(r.change_point.rel_change()))
        .add("confirm", r.sha.substr(0, 10));
  }

 private:
  // Regressions are what people are woken for: new ones, and the withdrawal
  // of one that was announced (raised earlier, so no longer new).
  std::optional<json> webhook_body(const judge::FlagEvent& f, const std::string& sha, const std::string& point) {
    if (f.flag.detail.value("verdict", "") != "regression") return std::nullopt;
    const bool raised = f.what == judge::FlagEvent::What::kRaised;
    const bool withdrawn = f.what == judge::FlagEvent::What::kWithdrawn;
    if (!raised && !withdrawn) return std::nullopt;
    const std::string basis = f.flag.detail.value("basis", "previous");
    const std::string verb = withdrawn ? "withdrawn: regression " : "regression ";
    json message = {
        {"event", webhook_event(f)},
        {"flag_id", f.flag.id},
        {"repo", ctx_.options.repo.string()},
        {"branch", branch_},
        {"commit", {{"sha", sha}, {"subject", subject_of(f.flag.commit_id)}, {"author", author_of(f.flag.commit_id)}}},
        {"variant", f.flag.variant},
        {"point", point},
        {"testbed", testbed_name(f.flag.testbed_id)},
        {"metric", manifest_.metric.name},
        {"delta_rel", f.flag.magnitude_rel},
        {"against", {{"sha", f.flag.detail.value("against", "")}, {"basis", basis}}},
        {"detail", f.flag.detail},
        {"text", "perfwatch: " + verb + signed_percent(f.flag.magnitude_rel) + " " + manifest_.metric.name + " at " +
                     point + " (" + f.flag.variant + ") on " + testbed_name(f.flag.testbed_id) + " in " +
                     sha.substr(0, 10) + " " + subject_of(f.flag.commit_id) +
                     (withdrawn ? " -- " + f.reason : "")}};
    if (withdrawn) message["reason"] = f.reason;
    return message;
  }

  const store::CommitRecord& record(store::CommitId id) {
    if (id == commit_.id) return commit_;
    auto it = others_.find(id);
    if (it == others_.end()) {
      auto c = store::RepoReader(ctx_.db).commit(id);
      it = others_.emplace(id, c ? *c : store::CommitRecord{}).first;
    }
    return it->second;
  }
  std::string sha_of(store::CommitId id) { return record(id).sha; }
  // A flag names where it was seen: "is it a Hopper-only regression?"
  const std::string& testbed_name(store::TestbedId id) {
    auto it = testbeds_.find(id);
    if (it == testbeds_.end()) {
      auto t = store::RunReader(ctx_.db).testbed(id);
      it = testbeds_.emplace(id, t ? t->name : "testbed " + std::to_string(id)).first;
    }
    return it->second;
  }
  std::string subject_of(store::CommitId id) { return record(id).subject; }
  std::string author_of(store::CommitId id) { return record(id).author; }

  Context& ctx_;
  const runner::Manifest& manifest_;
  const store::CommitRecord& commit_;
  const std::string& branch_;
  judge::PointNames names_;
  std::map<store::CommitId, store::CommitRecord> others_;
  std::map<store::TestbedId, std::string> testbeds_;
};

}  // namespace

Result<std::vector<store::OutboxRecord>> queue_webhooks(Context& ctx, const runner::Manifest& manifest,
                                                        const store::CommitRecord& commit, const std::string& branch,
                                                        const judge::JudgeResult& result) {
  std::vector<store::OutboxRecord> out;
  if (!ctx.webhook) return out;
  Announcer a(ctx, manifest, commit, branch);
  store::OutboxWriter outbox(ctx.db);
  for (const auto& f : result.flags) {
    auto m = a.webhook(f);
    if (!m) continue;
    auto written = outbox.add(*m);
    if (!written) return fail(written.error());
    out.push_back(std::move(*written));
  }
  return out;
}

void announce(Context& ctx, const runner::Manifest& manifest, const store::CommitRecord& commit,
              const std::string& branch, const judge::JudgeResult& result,
              const std::vector<store::OutboxRecord>& queued) {
  Announcer a(ctx, manifest, commit, branch);
  for (const auto& c : result.comparisons) a.comparison(c);
  for (const auto& f : result.flags) a.flag(f);
  for (const auto& m : queued) {
    auto e = ctx.log.event("webhook");
    e.commit(m.commit_sha);
    if (m.flag_id) e.add("flag", static_cast<long long>(*m.flag_id));
    e.add("event", m.event).add("message_id", m.message_id).add("status", "queued");
  }
  if (result.unchanged_pair) {
    ctx.log.event("noise").commit(commit.sha).add("unchanged_pair", result.unchanged_pair->substr(0, 10)).add(
        "binary", result.binary_hash);
  }
  for (const auto& x : result.experiments) a.experiment(x);
  for (const auto& r : result.confirms) a.confirm(r);
  for (const auto& r : result.recoveries) {
    ctx.log.event("recovered")
        .commit(r.regressed_sha)
        .add("at", r.recovered_at_sha.substr(0, 10))
        .add("cells", static_cast<long long>(r.undone.size()));
  }
}

Status deliver_webhooks(Context& ctx) {
  if (!ctx.delivers_webhooks) return {};
  auto round = deliver_due(ctx.db, ctx.log, *ctx.poster, ctx.options.webhook_delivery, ctx.stop);
  if (!round) return fail(round.error());
  return {};
}

}  // namespace perfwatch::daemon
