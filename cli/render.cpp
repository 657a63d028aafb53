#include "cli/render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace perfwatch::cli {

using nlohmann::json;

namespace {

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }
std::string lpad(const std::string& s, std::size_t w) { return s.size() >= w ? " " + s : std::string(w - s.size(), ' ') + s; }

std::string number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[32];
  double a = std::fabs(*v);
  std::snprintf(buf, sizeof buf, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 1 ? "%.2f" : "%.4g", *v);
  return buf;
}

std::string p_text(std::optional<double> p) {
  if (!p) return "-";
  char buf[32];
  if (*p < 0.0001) return "<0.0001";
  std::snprintf(buf, sizeof buf, "%.4f", *p);
  return buf;
}

std::string date(store::UnixSeconds t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string verdict_word(store::ExperimentVerdict v) {
  if (v == store::ExperimentVerdict::kNoEffect) return "NO EFFECT";
  return upper(std::string(store::to_string(v)));
}

// The name a candidate goes by in a headline.
std::string candidate_label(const store::ExperimentRecord& e, const std::string& candidate) {
  for (const auto& c : e.candidates) {
    if (c.value("name", "") == candidate && c.contains("params") && e.baseline.contains("params")) {
      std::string diff = params_diff(e.baseline["params"], c["params"]);
      return diff.empty() ? candidate : diff;
    }
  }
  return candidate;
}

}  // namespace

std::string signed_percent(double rel, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.*f%%", decimals, 100 * rel);
  return buf;
}

std::string params_diff(const json& base, const json& cand) {
  std::string out;
  if (!cand.is_object()) return out;
  for (auto it = cand.begin(); it != cand.end(); ++it) {
    if (base.is_object() && base.contains(it.key()) && base[it.key()] == it.value()) continue;
    if (!out.empty()) out += " ";
    out += it.key() + "=" + (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
  }
  return out;
}

std::string evidence_word(store::ChangeVerdict v) {
  switch (v) {
    case store::ChangeVerdict::kRegression: return "worse";
    case store::ChangeVerdict::kImprovement: return "better";
    case store::ChangeVerdict::kWithinNoise: return "no effect";
    case store::ChangeVerdict::kUndecided: return "undecided";
  }
  return "?";
}

std::vector<std::string> experiment_headlines(const store::ExperimentDetail& d) {
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
    std::string verdict = worse && better ? "MIXED" : worse ? "REJECTED" : better ? "ACCEPTED" : "NO EFFECT";
    if (by_candidate.size() == 1) verdict = verdict_word(e.verdict);
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
        points += (points.empty() ? "" : ", ") + r->point_key;
      }
      line += std::string(first ? " " : "; ") + evidence_word(v) + " " + signed_percent(lo) +
              (hi > lo + 1e-9 ? ".." + signed_percent(hi) : "") + metric + " at " + points;
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

std::string experiment_text(const store::ExperimentDetail& d) {
  const auto& e = d.experiment;
  std::string out = "experiment " + std::to_string(e.id) + "  " + verdict_word(e.verdict) + "  (" +
                    std::string(store::to_string(e.source));
  if (!e.group_key.empty()) out += ", group " + e.group_key;
  out += ", " + date(e.created_at) + ")\n";
  out += "  hypothesis: " + e.hypothesis + "\n";
  auto side = [](const json& j) {
    std::string s;
    if (j.contains("name")) s += j["name"].get<std::string>();
    if (j.contains("variant")) s += j["variant"].get<std::string>();
    if (j.contains("params") && j["params"].is_object() && !j["params"].empty()) s += " " + j["params"].dump();
    if (j.contains("commit")) s += (s.empty() ? "commit " : " at ") + j["commit"].get<std::string>().substr(0, 10);
    if (j.contains("subject")) s += " \"" + j["subject"].get<std::string>() + "\"";
    return s;
  };
  out += "  baseline:   " + side(e.baseline) + "\n";
  for (const auto& c : e.candidates) out += "  candidate:  " + side(c) + "\n";
  for (const auto& h : experiment_headlines(d)) out += "  => " + h + "\n";
  if (!d.evidence.empty()) {
    std::size_t pw = 7, cw = 11;
    for (const auto& r : d.evidence) {
      pw = std::max(pw, r.point_key.size() + 2);
      cw = std::max(cw, r.evidence.candidate.size() + 2);
    }
    out += "  " + pad("point", pw) + pad("candidate", cw) + lpad("baseline", 11) + lpad("candidate", 11) +
           lpad("delta", 9) + lpad("band", 9) + lpad("p", 9) + lpad("runs", 6) + "  verdict\n";
    for (const auto& r : d.evidence) {
      const auto& ev = r.evidence;
      out += "  " + pad(r.point_key, pw) + pad(ev.candidate, cw) + lpad(number(ev.baseline_value), 11) +
             lpad(number(ev.candidate_value), 11) + lpad(ev.delta_rel ? signed_percent(*ev.delta_rel) : "-", 9) +
             lpad(ev.band_rel ? "+-" + signed_percent(*ev.band_rel).substr(1) : "-", 9) + lpad(p_text(ev.p_value), 9) +
             lpad(std::to_string(ev.runs), 6) + "  " + evidence_word(ev.verdict) + "\n";
    }
  }
  out += "  conclusion: " + (e.conclusion.empty() ? std::string("(none yet)") : e.conclusion) + "\n";
  return out;
}

std::string flags_text(const std::vector<store::FlagView>& flags) {
  if (flags.empty()) return "no flags\n";
  std::string out;
  std::size_t pw = 7, vw = 9;
  for (const auto& f : flags) {
    pw = std::max(pw, f.point_key.size() + 2);
    vw = std::max(vw, f.flag.variant.size() + 2);
  }
  out += pad("id", 6) + pad("kind", 13) + pad("commit", 12) + pad("variant", vw) + pad("point", pw) + lpad("delta", 9) +
         lpad("band", 9) + lpad("p", 9) + "  state / subject\n";
  for (const auto& f : flags) {
    const json& d = f.flag.detail;
    std::optional<double> band, p;
    if (d.contains("band_rel") && d["band_rel"].is_number()) band = d["band_rel"].get<double>();
    if (d.contains("p_value") && d["p_value"].is_number()) p = d["p_value"].get<double>();
    std::string kind(store::to_string(f.flag.kind));
    if (f.flag.kind == store::FlagKind::kChangepoint) kind += d.value("verdict", "") == "improvement" ? "+" : "-";
    std::string state = f.flag.acknowledged ? "acked (" + f.flag.acknowledged->reason + ")" : "OPEN";
    out += pad(std::to_string(f.flag.id), 6) + pad(kind, 13) + pad(f.sha.substr(0, 10), 12) + pad(f.flag.variant, vw) +
           pad(f.point_key, pw) + lpad(signed_percent(f.flag.magnitude_rel), 9) +
           lpad(band ? "+-" + signed_percent(*band).substr(1) : "-", 9) + lpad(p_text(p), 9) + "  " + state + "  " +
           f.subject + "\n";
  }
  return out;
}

std::string history_text(const store::PointHistory& h, double default_band) {
  std::string out = "history of " + h.variant + " at " + h.point.key;
  if (h.band) {
    out += "; band +-" + signed_percent(h.band->band_rel).substr(1) + (h.band->calibrated ? " (calibrated: " : " (") +
           h.band->method + ")";
  } else {
    out += "; band +-" + signed_percent(default_band).substr(1) + " (uncalibrated: the manifest's default)";
  }
  out += "\n" + pad("commit", 12) + lpad("value", 11) + lpad("95% CI", 22) + lpad("runs", 6) + "  flag      subject\n";
  for (const auto& e : h.entries) {
    std::string ci = "-";
    std::string value = "-";
    std::int64_t runs = static_cast<std::int64_t>(e.runs.size());
    if (e.pooled) {
      value = number(e.pooled->median);
      if (e.pooled->ci_low && e.pooled->ci_high) ci = "[" + number(e.pooled->ci_low) + ", " + number(e.pooled->ci_high) + "]";
      runs = e.pooled->runs;
    }
    std::string flag = e.flag ? std::string(store::to_string(e.flag->kind)) : "";
    std::string subject = e.subject;
    if (e.inherited_from) subject = "(inherits) " + subject;
    out += pad(e.sha.substr(0, 10), 12) + lpad(value, 11) + lpad(ci, 22) + lpad(std::to_string(runs), 6) + "  " +
           pad(flag, 10) + subject + "\n";
  }
  return out;
}

}  // namespace perfwatch::cli
