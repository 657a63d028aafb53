#include "views/flag_view.h"

#include "store/repo_store.h"
#include "store/run_store.h"
#include "views/fragments.h"
#include "views/lookup.h"
#include "views/text_format.h"

namespace perfwatch::views {

using nlohmann::json;

std::string_view to_string(store::FlagState state) {
  switch (state) {
    case store::FlagState::kOpen: return "open";
    case store::FlagState::kAcknowledged: return "acknowledged";
    case store::FlagState::kWithdrawn: return "withdrawn";
    case store::FlagState::kAny: return "any";
  }
  return "any";
}

Result<FlagsView> flags_view(store::Database& db, const FlagsRequest& request) {
  if (request.limit < 1 || request.limit > kFlagsLimitMax)
    return fail(invalid_argument("limit", "must be an integer from 1 to " + std::to_string(kFlagsLimitMax)));
  if (request.offset < 0) return fail(invalid_argument("offset", "must not be negative"));
  store::FlagFilter f;
  f.repo_id = request.repo;
  f.state = request.state;
  f.kind = request.kind;
  f.testbed_id = request.testbed;
  if (request.variant) {
    auto repo = resolve_repo(db, request.repo);
    if (!repo) return fail(repo.error());
    auto variant = resolve_variant(db, repo->id, *request.variant);
    if (!variant) return fail(variant.error());
    f.variant = *variant;
  }
  if (request.point) {
    // A key names a point in any repo; a label or some axes, within the repo.
    auto p = store::RunReader(db).find_point(*request.point);
    if (!p) return fail(p.error());
    if (*p) {
      f.point_id = (*p)->id;
    } else {
      auto repo = resolve_repo(db, request.repo);
      if (!repo) return fail(repo.error());
      auto named = resolve_point(db, repo->id, *request.point);
      if (!named) return fail(named.error());
      f.point_id = named->id;
    }
  }
  if (request.commit) {
    // A commit filter needs its repo: the one named, or the only one.
    auto repo = resolve_repo(db, request.repo);
    if (!repo) return fail(repo.error());
    auto c = resolve_commit(db, repo->id, *request.commit, "commit");
    if (!c) return fail(c.error());
    f.commit_id = c->id;
  }
  f.limit = request.limit + 1;  // one more says whether there is a next page
  f.offset = request.offset;
  auto list = store::AnalysisReader(db).flags(f);
  if (!list) return fail(list.error());
  FlagsView view;
  view.state = request.state;
  view.limit = request.limit;
  view.offset = request.offset;
  view.has_more = static_cast<int>(list->size()) > request.limit;
  if (view.has_more) list->pop_back();
  view.flags = std::move(*list);
  auto labels = point_labels(db);
  if (!labels) return fail(labels.error());
  view.labels = std::move(*labels);
  return view;
}

json flags_document(const FlagsView& v) {
  json flags = json::array();
  for (const auto& f : v.flags) {
    auto label = v.labels.find(f.flag.point_id);
    flags.push_back(flag_json(f, label == v.labels.end() ? "" : label->second));
  }
  return {{"schema_version", kSchemaVersion},
          {"state", to_string(v.state)},
          {"limit", v.limit},
          {"offset", v.offset},
          {"has_more", v.has_more},
          {"flags", std::move(flags)}};
}

std::string flags_text(const FlagsView& v) {
  using namespace text;
  if (v.flags.empty()) return "no flags\n";
  std::string out;
  // A point as people name it: its label ("C48"), else its key.
  auto point_of = [&](const store::FlagView& f) {
    auto label = v.labels.find(f.flag.point_id);
    return label == v.labels.end() || label->second.empty() ? f.point_key : label->second;
  };
  std::size_t pw = 7, vw = 9;
  for (const auto& f : v.flags) {
    pw = std::max(pw, point_of(f).size() + 2);
    vw = std::max(vw, f.flag.variant.size() + 2);
  }
  out += pad("id", 6) + pad("kind", 13) + pad("commit", 12) + pad("variant", vw) + pad("point", pw) + lpad("delta", 9) +
         lpad("band", 9) + lpad("p", 9) + "  state / subject\n";
  for (const auto& f : v.flags) {
    const json& d = f.flag.detail;
    std::optional<double> band_rel, p;
    if (d.contains("band_rel") && d["band_rel"].is_number()) band_rel = d["band_rel"].get<double>();
    if (d.contains("p_value") && d["p_value"].is_number()) p = d["p_value"].get<double>();
    std::string kind(store::to_string(f.flag.kind));
    if (f.flag.kind == store::FlagKind::kChangepoint) {
      const bool up = d.contains("verdict") && d["verdict"].is_string() && d["verdict"] == "improvement";
      kind += up ? "+" : "-";
    }
    std::string state = f.flag.withdrawn      ? "withdrawn (" + f.flag.withdrawn->reason + ")"
                        : f.flag.acknowledged ? "acked (" + f.flag.acknowledged->reason + ")"
                                              : "OPEN";
    out += pad(std::to_string(f.flag.id), 6) + pad(kind, 13) + pad(f.sha.substr(0, 10), 12) + pad(f.flag.variant, vw) +
           pad(point_of(f), pw) + lpad(signed_percent(f.flag.magnitude_rel), 9) +
           lpad(band_rel ? band(*band_rel) : "-", 9) + lpad(p_value(p), 9) + "  " + state + "  " + f.subject + "\n";
  }
  return out;
}

Result<FlagDetail> flag_view(store::Database& db, store::FlagId id) {
  store::AnalysisReader analysis(db);
  auto flag = analysis.flag(id);
  if (!flag) return fail(field_error(flag.error(), "flag"));
  auto point = store::RunReader(db).point(flag->flag.point_id);
  if (!point) return fail(point.error());
  FlagDetail view{std::move(*flag), std::move(*point), std::nullopt, std::nullopt};
  if (view.flag.flag.comparison_id) {
    auto cmp = analysis.comparison(*view.flag.flag.comparison_id);
    if (cmp) {
      auto against = store::RepoReader(db).commit(cmp->against_commit_id);
      if (!against) return fail(against.error());
      view.comparison = std::move(*cmp);
      view.against = std::move(*against);
    } else if (cmp.error().code != ErrorCode::kNotFound) {
      return fail(cmp.error());
    }
  }
  return view;
}

json flag_document(const FlagDetail& v) {
  json out = flag_json(v.flag, point_label(v.point));
  out["schema_version"] = kSchemaVersion;
  out["point"] = point_json(v.point);
  out["comparison"] = nullptr;
  if (v.comparison) {
    json c = comparison_json(*v.comparison);
    if (v.against) c["against"] = commit_brief(*v.against);
    out["comparison"] = std::move(c);
  }
  return out;
}

}  // namespace perfwatch::views
