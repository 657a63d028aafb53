#include "views/experiment_view.h"

#include <algorithm>
#include <cmath>

#include "common/text.h"
#include "views/fragments.h"
#include "views/lookup.h"
#include "views/text_format.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string verdict_word(store::ExperimentVerdict v) {
  if (v == store::ExperimentVerdict::kNoEffect) return "NO EFFECT";
  return upper(std::string(store::to_string(v)));
}

// A verdict word for people: "worse", "better", "no effect", "undecided".
std::string evidence_word(store::ChangeVerdict v) {
  switch (v) {
    case store::ChangeVerdict::kRegression: return "worse";
    case store::ChangeVerdict::kImprovement: return "better";
    case store::ChangeVerdict::kWithinNoise: return "no effect";
    case store::ChangeVerdict::kUndecided: return "undecided";
  }
  return "?";
}

std::string string_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The name a candidate goes by in a headline.
std::string candidate_label(const store::ExperimentRecord& e, const std::string& candidate) {
  for (const auto& c : e.candidates) {
    if (c.is_object() && string_of(c, "name") == candidate && c.contains("params") && e.baseline.is_object() &&
        e.baseline.contains("params")) {
      std::string diff = params_diff(e.baseline["params"], c["params"]);
      return diff.empty() ? candidate : diff;
    }
  }
  return candidate;
}

Result<ExperimentEntry> entry_of(store::Database& db, store::ExperimentId id, ShaCache& shas) {
  auto detail = store::ExperimentReader(db).experiment(id);
  if (!detail) return fail(field_error(detail.error(), "experiment"));
  ExperimentEntry entry;
  entry.detail = std::move(*detail);
  for (const auto& ref : entry.detail.experiment.refs) {
    auto sha = shas.sha(ref.commit_id);
    if (!sha) return fail(sha.error());
    entry.ref_shas.push_back(*sha);
  }
  entry.headlines = experiment_headlines(entry.detail);
  return entry;
}

json entry_json(const ExperimentEntry& entry, bool evidence, const std::map<store::PointId, std::string>& labels) {
  json e = experiment_json(entry.detail.experiment);
  for (std::size_t i = 0; i < entry.ref_shas.size() && i < e["refs"].size(); ++i)
    e["refs"][i]["commit_sha"] = entry.ref_shas[i].empty() ? json(nullptr) : json(entry.ref_shas[i]);
  e["headlines"] = entry.headlines;
  e["shown_verdict"] = shown_verdict(entry.detail);
  if (evidence) {
    e["evidence"] = json::array();
    for (const auto& row : entry.detail.evidence) {
      auto label = labels.find(row.evidence.point_id);
      e["evidence"].push_back(evidence_json(row, label == labels.end() ? "" : label->second,
                                            entry.detail.experiment.source == store::ExperimentSource::kAuto));
    }
  }
  return e;
}

}  // namespace

std::string params_diff(const json& base, const json& cand) {
  std::string out;
  if (!cand.is_object()) return out;
  for (auto it = cand.begin(); it != cand.end(); ++it) {
    if (base.is_object() && base.contains(it.key()) && base[it.key()] == it.value()) continue;
    if (!out.empty()) out += " ";
    out += it.key() + "=" + (it.value().is_string() ? it.value().get<std::string>() : json_text(it.value()));
  }
  return out;
}

std::string shown_verdict(const store::ExperimentDetail& d) {
  const auto v = d.experiment.verdict;
  if (v == store::ExperimentVerdict::kNoEffect) {
    for (const auto& row : d.evidence)
      if (row.evidence.verdict == store::ChangeVerdict::kUndecided) return "undecided";
  }
  return std::string(store::to_string(v));
}

std::vector<std::string> experiment_headlines(const store::ExperimentDetail& d) {
  using text::signed_percent;
  const auto& e = d.experiment;
  std::map<std::string, std::vector<const store::EvidenceView*>> by_candidate;
  for (const auto& row : d.evidence) by_candidate[row.evidence.candidate].push_back(&row);
  std::vector<std::string> out;
  if (by_candidate.empty()) {
    out.push_back(verdict_word(e.verdict) + ": no evidence yet");
    return out;
  }
  const std::string metric = e.metric.empty() ? "" : " " + e.metric;
  for (const auto& [candidate, rows] : by_candidate) {
    std::map<store::ChangeVerdict, std::vector<const store::EvidenceView*>> groups;
    for (const auto* r : rows) groups[r->evidence.verdict].push_back(r);
    int worse = static_cast<int>(groups[store::ChangeVerdict::kRegression].size());
    int better = static_cast<int>(groups[store::ChangeVerdict::kImprovement].size());
    const int undecided_points = static_cast<int>(groups[store::ChangeVerdict::kUndecided].size());
    std::string verdict = worse && better ? "MIXED" : worse ? "REJECTED" : better ? "ACCEPTED" : "NO EFFECT";
    if (by_candidate.size() == 1) verdict = verdict_word(e.verdict);
    // Nothing found yet is not "no effect" while a point is still open.
    if (verdict == "NO EFFECT" && undecided_points > 0) verdict = "UNDECIDED";
    std::string line = candidate_label(e, candidate) + " " + verdict + ":";
    bool first = true;
    for (auto v : {store::ChangeVerdict::kRegression, store::ChangeVerdict::kImprovement}) {
      const auto& g = groups[v];
      if (g.empty()) continue;
      double lo = INFINITY, hi = -INFINITY;
      std::string points;
      for (const auto* r : g) {
        if (r->evidence.delta_rel) {
          lo = std::min(lo, *r->evidence.delta_rel);
          hi = std::max(hi, *r->evidence.delta_rel);
        }
        points += (points.empty() ? "" : ", ") + (r->point_label.empty() ? r->point_key : r->point_label);
      }
      const std::string range =
          std::isfinite(lo) ? signed_percent(lo) + (hi > lo + 1e-9 ? ".." + signed_percent(hi) : "") : "?";
      line += std::string(first ? " " : "; ") + evidence_word(v) + " " + range + metric + " at " + points;
      first = false;
    }
    const int quiet = static_cast<int>(groups[store::ChangeVerdict::kWithinNoise].size());
    const int open = static_cast<int>(groups[store::ChangeVerdict::kUndecided].size());
    if (quiet) line += std::string(first ? " " : "; ") + "no effect at " + std::to_string(quiet) + " point(s)", first = false;
    if (open) line += std::string(first ? " " : "; ") + "undecided at " + std::to_string(open) + " point(s)";
    out.push_back(line);
  }
  return out;
}

Result<ExperimentsView> experiments_view(store::Database& db, const ExperimentsRequest& request) {
  if (request.limit < 1 || request.limit > kExperimentsLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kExperimentsLimitMax)));
  if (request.offset < 0) return fail(invalid_argument("offset", "must not be negative"));
  store::ExperimentFilter f;
  f.text = request.text;
  f.verdict = request.verdict;
  f.source = request.source;
  for (const auto& p : request.params) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      return fail(invalid_argument("param", "'" + p + "': must be name=value, e.g. num_warps=8"));
    f.params.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  f.group_key = request.group;
  f.testbed_id = request.testbed;
  f.repo_id = request.repo;
  f.since = request.since;
  f.until = request.until;
  f.limit = request.limit + 1;  // one more says whether there is a next page
  f.offset = request.offset;

  // One snapshot for the whole answer, even while the daemon writes.
  store::Transaction snapshot(db, store::Transaction::Mode::kDeferred);
  if (!snapshot.status()) return fail(snapshot.status().error());
  if (request.commit) {
    auto repo = resolve_repo(db, request.repo);
    if (!repo) return fail(repo.error());
    auto c = resolve_commit(db, repo->id, *request.commit, "commit");
    if (!c) return fail(c.error());
    f.commit_id = c->inherited_from.value_or(c->id);
  }
  auto found = store::ExperimentReader(db).search(f);
  if (!found) return fail(field_error(found.error(), "param"));
  ExperimentsView view;
  view.limit = request.limit;
  view.offset = request.offset;
  view.evidence = request.evidence;
  view.has_more = static_cast<int>(found->size()) > request.limit;
  if (view.has_more) found->pop_back();
  ShaCache shas(db);
  for (const auto& e : *found) {
    auto entry = entry_of(db, e.id, shas);
    if (!entry) return fail(entry.error());
    view.experiments.push_back(std::move(*entry));
  }
  auto labels = point_labels(db);
  if (!labels) return fail(labels.error());
  view.labels = std::move(*labels);
  return view;
}

json experiments_document(const ExperimentsView& v) {
  json list = json::array();
  for (const auto& e : v.experiments) list.push_back(entry_json(e, v.evidence, v.labels));
  return {{"schema_version", kSchemaVersion},
          {"limit", v.limit},
          {"offset", v.offset},
          {"has_more", v.has_more},
          {"experiments", std::move(list)}};
}

std::string experiments_text(const ExperimentsView& v, bool brief) {
  if (v.experiments.empty()) return "no experiments match\n";
  std::string out;
  for (const auto& entry : v.experiments) {
    const auto& e = entry.detail.experiment;
    if (!brief) {
      out += experiment_text(entry) + "\n";
      continue;
    }
    std::string where;
    for (const auto& c : e.candidates) {
      const std::string sha = c.is_object() ? string_of(c, "commit") : "";
      if (!sha.empty()) where = sha.substr(0, 10);
    }
    for (const auto& h : entry.headlines) {
      out += "#" + std::to_string(e.id) + " " + std::string(store::to_string(e.source)) +
             (where.empty() ? "" : " " + where) + "  " + h + "\n";
    }
  }
  return out;
}

Result<ExperimentView> experiment_view(store::Database& db, store::ExperimentId id) {
  ShaCache shas(db);
  auto entry = entry_of(db, id, shas);
  if (!entry) return fail(entry.error());
  auto labels = point_labels(db);
  if (!labels) return fail(labels.error());
  return ExperimentView{std::move(*entry), std::move(*labels)};
}

json experiment_document(const ExperimentView& v) {
  json doc = entry_json(v.entry, true, v.labels);
  doc["schema_version"] = kSchemaVersion;
  return doc;
}

std::string experiment_text(const ExperimentEntry& entry) {
  using namespace text;
  const auto& d = entry.detail;
  const auto& e = d.experiment;
  std::string shown = shown_verdict(d);
  for (char& c : shown) c = c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out = "experiment " + std::to_string(e.id) + "  " + shown + "  (" +
                    std::string(store::to_string(e.source));
  if (!e.group_key.empty()) out += ", group " + e.group_key;
  out += ", " + date(e.created_at) + ")\n";
  out += "  hypothesis: " + e.hypothesis + "\n";
  auto side = [](const json& j) {
    std::string s;
    if (!j.is_object()) return json_text(j);
    s += string_of(j, "name");
    s += string_of(j, "variant");
    if (j.contains("params") && j["params"].is_object() && !j["params"].empty()) s += " " + json_text(j["params"]);
    if (std::string sha = string_of(j, "commit"); !sha.empty()) s += (s.empty() ? "commit " : " at ") + sha.substr(0, 10);
    if (std::string subject = string_of(j, "subject"); !subject.empty()) s += " \"" + subject + "\"";
    return s;
  };
  out += "  baseline:   " + side(e.baseline) + "\n";
  for (const auto& c : e.candidates) out += "  candidate:  " + side(c) + "\n";
  for (const auto& h : entry.headlines) out += "  => " + h + "\n";
  if (!d.evidence.empty()) {
    std::size_t pw = 7, cw = 11;
    for (const auto& r : d.evidence) {
      pw = std::max(pw, (r.point_label.empty() ? r.point_key : r.point_label).size() + 2);
      cw = std::max(cw, r.evidence.candidate.size() + 2);
    }
    out += "  " + pad("point", pw) + pad("candidate", cw) + lpad("baseline", 11) + lpad("candidate", 11) +
           lpad("delta", 9) + lpad("band", 9) + lpad("p", 9) + lpad("runs", 6) + "  verdict\n";
    for (const auto& r : d.evidence) {
      const auto& ev = r.evidence;
      out += "  " + pad(r.point_label.empty() ? r.point_key : r.point_label, pw) + pad(ev.candidate, cw) + lpad(number(ev.baseline_value), 11) +
             lpad(number(ev.candidate_value), 11) + lpad(ev.delta_rel ? signed_percent(*ev.delta_rel) : "-", 9) +
             lpad(ev.band_rel ? band(*ev.band_rel) : "-", 9) + lpad(p_value(ev.p_value), 9) +
             lpad(std::to_string(ev.runs), 6) + "  " + evidence_word(ev.verdict) + "\n";
    }
  }
  out += "  conclusion: " + (e.conclusion.empty() ? std::string("(none yet)") : e.conclusion) + "\n";
  return out;
}

}  // namespace perfwatch::views
