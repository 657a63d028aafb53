#include "daemon/run_report.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace perfwatch::daemon {

using nlohmann::json;

namespace {

struct Row {
  const store::VariantRecord* variant;
  const store::PointRecord* point;
  const store::RunTableCell* cell;
};

const store::RunTableCell* find_cell(const store::RunTable& t, store::VariantId v, store::PointId p) {
  for (const auto& c : t.cells) {
    if (c.variant_id == v && c.point_id == p) return &c;
  }
  return nullptr;
}

const store::VariantRecord* baseline_of(const store::RunTable& t) {
  for (const auto& v : t.variants) {
    if (v.is_baseline) return &v;
  }
  return nullptr;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Tokens per second at the median: B tokens per step.
std::optional<double> tokens_per_s(const store::PointRecord& p, const store::SummaryRecord& s, const RunReportContext& ctx) {
  if (!s.median || !p.batch) return std::nullopt;
  if (ctx.metric == "time_us") return static_cast<double>(*p.batch) / *s.median * 1e6;
  if (ctx.metric == "tokens_per_s") return *s.median;
  return std::nullopt;
}

std::optional<double> delta(const store::RunTable& t, const store::RunTableCell* cell, store::PointId point) {
  const store::VariantRecord* base = baseline_of(t);
  if (!base || !cell || !cell->summary || !cell->summary->median) return std::nullopt;
  const store::RunTableCell* b = find_cell(t, base->id, point);
  if (!b || !b->summary || !b->summary->median || *b->summary->median == 0) return std::nullopt;
  return *cell->summary->median / *b->summary->median - 1.0;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string lpad(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

}  // namespace

std::string render_run_text(const store::RunTable& t, const RunReportContext& ctx) {
  std::string out;
  const store::VariantRecord* base = baseline_of(t);
  std::string unit = ctx.metric == "time_us" ? "us/step" : ctx.metric;
  size_t vw = 8;
  for (const auto& v : t.variants) vw = std::max(vw, v.name.size() + 2);
  size_t pw = 6;
  for (const auto& p : t.points) pw = std::max(pw, p.key.size() + 2);

  out += pad("point", pw) + pad("variant", vw) + lpad("median " + unit, 18) + "  " + pad("95% CI", 24) + lpad("trials", 7) +
         lpad("tokens/s", 12) + "  " + "vs " + (base ? base->name : std::string("baseline")) + "\n";
  for (const auto& p : t.points) {
    for (const auto& v : t.variants) {
      const store::RunTableCell* cell = find_cell(t, v.id, p.id);
      std::string line = pad(p.key, pw) + pad(v.name, vw);
      if (v.status == store::VariantStatus::kInfeasible) {
        out += line + "infeasible: " + v.reason + "\n";
        continue;
      }
      if (!cell) {
        out += line + "not measured\n";
        continue;
      }
      if (cell->check && cell->check->status != store::CheckStatus::kOk) {
        out += line + std::string(store::to_string(cell->check->status)) + ": " + cell->check->reason + "\n";
        continue;
      }
      if (!cell->summary || !cell->summary->median) {
        out += line + "no trials\n";
        continue;
      }
      const store::SummaryRecord& s = *cell->summary;
      line += lpad(fmt("%.2f", *s.median), 18) + "  ";
      line += pad("[" + fmt("%.2f", s.ci_low.value_or(NAN)) + ", " + fmt("%.2f", s.ci_high.value_or(NAN)) + "]", 24);
      line += lpad(std::to_string(s.n), 7);
      auto tps = tokens_per_s(p, s, ctx);
      line += lpad(tps ? fmt("%.0f", *tps) : "-", 12) + "  ";
      if (base && v.id == base->id) {
        line += "baseline";
      } else if (auto d = delta(t, cell, p.id)) {
        bool better = ctx.lower_is_better ? *d < 0 : *d > 0;
        line += fmt("%+.1f%%", *d * 100) + (std::fabs(*d) < 1e-12 ? "" : better ? " (better)" : " (worse)");
      } else {
        line += "-";
      }
      if (s.dropped_throttled > 0) line += "  [" + std::to_string(s.dropped_throttled) + " throttled dropped]";
      out += line + "\n";
    }
  }
  return out;
}

json render_run_json(const store::RunTable& t, const RunReportContext& ctx) {
  json run = {{"id", t.run.id},
              {"status", store::to_string(t.run.status)},
              {"kind", store::to_string(t.run.kind)},
              {"message", t.run.message},
              {"started_at", t.run.started_at},
              {"wall_s", t.run.wall_s ? json(*t.run.wall_s) : json(nullptr)},
              {"trials", t.run.trial_count},
              {"provenance", t.run.provenance}};
  json commit = {{"sha", ctx.commit.sha}, {"subject", ctx.commit.subject}, {"author", ctx.commit.author},
                 {"committed_at", ctx.commit.committed_at}};
  json variants = json::array();
  for (const auto& v : t.variants) {
    variants.push_back({{"name", v.name}, {"params", v.params}, {"baseline", v.is_baseline},
                        {"status", store::to_string(v.status)}, {"reason", v.reason}, {"resources", v.resources}});
  }
  json points = json::array();
  for (const auto& p : t.points) {
    points.push_back({{"key", p.key}, {"batch", p.batch ? json(*p.batch) : json(nullptr)},
                      {"heads", p.heads ? json(*p.heads) : json(nullptr)}, {"topk", p.topk ? json(*p.topk) : json(nullptr)},
                      {"dtype", p.dtype}});
  }
  json cells = json::array();
  for (const auto& p : t.points) {
    for (const auto& v : t.variants) {
      const store::RunTableCell* cell = find_cell(t, v.id, p.id);
      if (!cell) continue;
      json c = {{"variant", v.name}, {"point", p.key}, {"trials", cell->trials}};
      if (cell->check) {
        c["check"] = {{"status", store::to_string(cell->check->status)}, {"reason", cell->check->reason},
                      {"rel_l2_o", cell->check->rel_l2_o ? json(*cell->check->rel_l2_o) : json(nullptr)}};
      }
      if (cell->summary && cell->summary->median) {
        const auto& s = *cell->summary;
        c["metric"] = ctx.metric;
        c["n"] = s.n;
        c["median"] = *s.median;
        c["ci_low"] = s.ci_low ? json(*s.ci_low) : json(nullptr);
        c["ci_high"] = s.ci_high ? json(*s.ci_high) : json(nullptr);
        c["stop_reason"] = s.stop_reason;
        c["dropped_throttled"] = s.dropped_throttled;
        auto tps = tokens_per_s(p, s, ctx);
        c["tokens_per_s"] = tps ? json(*tps) : json(nullptr);
        auto d = delta(t, cell, p.id);
        c["delta_vs_baseline"] = d ? json(*d) : json(nullptr);
      }
      cells.push_back(c);
    }
  }
  return {{"run", run}, {"commit", commit}, {"metric", ctx.metric}, {"variants", variants}, {"points", points}, {"cells", cells}};
}

}  // namespace perfwatch::daemon
