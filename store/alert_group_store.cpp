#include "store/alert_group_store.h"

#include <set>
#include <string>

#include "store/detail/rows.h"
#include "store/detail/statement.h"

namespace perfwatch::store {

using detail::guard;
using detail::Query;
using detail::raise;

namespace {

constexpr const char* kTriageColumns =
    "g.commit_id AS commit_id, g.testbed_id AS testbed_id, g.triage AS triage, g.reason AS reason, "
    "g.triaged_by AS triaged_by, g.triaged_at AS triaged_at, g.linked_commit_id AS linked_commit_id";

GroupTriageRecord read_triage(const detail::Statement& s) {
  GroupTriageRecord g;
  g.commit_id = s.get<CommitId>("commit_id");
  g.testbed_id = s.get<TestbedId>("testbed_id");
  g.triage = detail::read_enum(s, "triage", parse_group_triage);
  g.reason = s.get<std::string>("reason");
  g.by = s.get<std::string>("triaged_by");
  g.at = s.get<UnixSeconds>("triaged_at");
  g.linked_commit_id = s.get<std::optional<CommitId>>("linked_commit_id");
  return g;
}

bool needs_link(GroupTriage t) { return t == GroupTriage::kRecovered || t == GroupTriage::kRecovery; }

}  // namespace

Result<int> AlertGroupWriter::triage(const GroupTriageRecord& g, std::optional<std::span<const FlagId>> only) {
  const std::string what = "triage the alert group of commit " + std::to_string(g.commit_id) + " on testbed " +
                           std::to_string(g.testbed_id);
  return guard(db_, what, [&] {
    if (g.reason.empty()) raise(ErrorCode::kInvalidArgument, "reason: must not be empty (say why)");
    if (needs_link(g.triage) != g.linked_commit_id.has_value())
      raise(ErrorCode::kInvalidArgument, std::string("linked commit: triage ") + std::string(to_string(g.triage)) +
                                             (needs_link(g.triage) ? " needs one" : " takes none"));
    Transaction tx(db_);
    detail::check(tx.status());
    Query standing(db_,
                   "SELECT id, ack_at FROM flags WHERE commit_id = :commit AND testbed_id = :testbed "
                   "AND withdrawn_at IS NULL");
    standing->bind(":commit", g.commit_id).bind(":testbed", g.testbed_id);
    std::set<FlagId> to_ack;
    bool any = false;
    std::set<FlagId> wanted;
    if (only) wanted.insert(only->begin(), only->end());
    while (standing->step()) {
      any = true;
      const auto id = standing->get<FlagId>("id");
      if (standing->is_null("ack_at") && (!only || wanted.count(id))) to_ack.insert(id);
    }
    if (!any) raise(ErrorCode::kNotFound, "no standing flag in this group: nothing to triage");
    const UnixSeconds at = g.at != 0 ? g.at : db_.now();
    Query put(db_,
              "INSERT INTO alert_groups (commit_id, testbed_id, triage, reason, triaged_by, triaged_at, "
              "  linked_commit_id) VALUES (:commit, :testbed, :triage, :reason, :by, :at, :linked) "
              "ON CONFLICT (commit_id, testbed_id) DO UPDATE SET triage = excluded.triage, reason = excluded.reason, "
              "  triaged_by = excluded.triaged_by, triaged_at = excluded.triaged_at, "
              "  linked_commit_id = excluded.linked_commit_id");
    put->bind(":commit", g.commit_id)
        .bind(":testbed", g.testbed_id)
        .bind(":triage", to_string(g.triage))
        .bind(":reason", g.reason)
        .bind(":by", g.by)
        .bind(":at", at)
        .bind(":linked", g.linked_commit_id);
    put->run();
    Query ack(db_, "UPDATE flags SET ack_reason = :reason, ack_by = :by, ack_at = :at WHERE id = :id");
    const std::string reason = std::string(to_string(g.triage)) + ": " + g.reason;
    for (FlagId id : to_ack) {
      ack->bind(":reason", reason).bind(":by", g.by).bind(":at", at).bind(":id", id);
      ack->run();
      ack->reset();
    }
    detail::check(tx.commit());
    return static_cast<int>(to_ack.size());
  });
}

Result<std::optional<GroupTriageRecord>> AlertGroupReader::triage(CommitId commit, TestbedId testbed) {
  return guard(db_, "read an alert group's triage", [&] {
    Query q(db_, std::string("SELECT ") + kTriageColumns +
                     " FROM alert_groups g WHERE g.commit_id = :commit AND g.testbed_id = :testbed");
    q->bind(":commit", commit).bind(":testbed", testbed);
    std::optional<GroupTriageRecord> out;
    if (q->step()) out = read_triage(*q);
    return out;
  });
}

Result<std::vector<GroupTriageRecord>> AlertGroupReader::triages(RepoId repo) {
  return guard(db_, "list alert group triages", [&] {
    Query q(db_, std::string("SELECT ") + kTriageColumns +
                     " FROM alert_groups g JOIN commits c ON c.id = g.commit_id WHERE c.repo_id = :repo "
                     "ORDER BY g.commit_id, g.testbed_id");
    q->bind(":repo", repo);
    std::vector<GroupTriageRecord> out;
    while (q->step()) out.push_back(read_triage(*q));
    return out;
  });
}

}  // namespace perfwatch::store
