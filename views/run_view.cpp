#include "views/run_view.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "analysis/delta.h"
#include "store/repo_store.h"
#include "views/fragments.h"
#include "views/lookup.h"
#include "views/metric_choice.h"

namespace perfwatch::views {

using nlohmann::json;

namespace {

const store::RunTableCell* find_cell(const store::RunTable& t, store::VariantId v, store::PointId p) {
  for (const auto& c : t.cells) {
    if (c.variant_id == v && c.point_id == p) return &c;
  }
  return nullptr;
}

std::optional<double> median_of(const store::RunTableCell* cell) {
  if (!cell || !cell->summary) return std::nullopt;
  return cell->summary->median;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// A median of another metric for the table, whatever its unit's scale:
// whole numbers from 1000 up (1902345 tokens/s), two decimals down to 0.01
// (41.23 us), three significant digits below.
std::string number_text(double v) {
  const double a = std::fabs(v);
  return fmt(a >= 1000 ? "%.0f" : a >= 0.01 || a == 0 ? "%.2f" : "%.3g", v);
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

const store::VariantRecord* RunView::baseline() const {
  for (const auto& v : table.variants) {
    if (v.is_baseline) return &v;
  }
  return nullptr;
}

Result<RunView> run_view(store::Database& db, store::RunId run) {
  store::RunReader reader(db);
  auto table = reader.table(run);
  if (!table) return fail(field_error(table.error(), "run"));
  RunView view;
  view.table = std::move(*table);
  auto commit = store::RepoReader(db).commit(view.table.run.commit_id);
  if (!commit) return fail(commit.error());
  view.commit = std::move(*commit);
  if (view.table.run.testbed_id) {
    auto t = reader.testbed(*view.table.run.testbed_id);
    if (!t) return fail(t.error());
    view.testbed = std::move(*t);
  }
  auto facts = reader.manifest_facts(run);
  if (!facts) return fail(facts.error());
  view.facts = std::move(*facts);

  const store::VariantRecord* base = view.baseline();
  for (const auto& c : view.table.cells) {
    RunCellFigures f;
    if (base && c.variant_id != base->id) {
      const store::RunTableCell* reference = find_cell(view.table, base->id, c.point_id);
      f.delta_vs_baseline = analysis::delta_rel(median_of(&c), median_of(reference));
      for (const auto& [name, s] : c.metrics) {
        std::optional<double> ref;
        if (reference)
          if (auto it = reference->metrics.find(name); it != reference->metrics.end()) ref = it->second.median;
        f.deltas_vs_baseline[name] = analysis::delta_rel(s.median, ref);
      }
    }
    view.figures.push_back(f);
  }
  return view;
}

json run_document(const RunView& v) {
  const store::RunTable& t = v.table;
  std::map<store::VariantId, const store::VariantRecord*> variants;
  for (const auto& x : t.variants) variants[x.id] = &x;
  std::map<store::PointId, const store::PointRecord*> points;
  for (const auto& p : t.points) points[p.id] = &p;
  json cells = json::array();
  for (std::size_t i = 0; i < t.cells.size(); ++i) {
    const auto& c = t.cells[i];
    const auto& f = v.figures[i];
    json metrics = json::object();  // every summarised metric, the judged one too
    for (const auto& [name, s] : c.metrics) metrics[name] = summary_json(s);
    json deltas = json::object();
    for (const auto& [name, d] : f.deltas_vs_baseline) deltas[name] = number_or_null(d);
    cells.push_back({{"variant_id", c.variant_id},
                     {"variant", variants.count(c.variant_id) ? variants[c.variant_id]->name : ""},
                     {"point_id", c.point_id},
                     {"point_key", points.count(c.point_id) ? points[c.point_id]->key : ""},
                     {"point_label", points.count(c.point_id) ? point_label(*points[c.point_id]) : ""},
                     {"trials", c.trials},
                     {"summary", c.summary ? summary_json(*c.summary) : json(nullptr)},
                     {"metrics", std::move(metrics)},
                     {"check", c.check ? check_json(*c.check) : json(nullptr)},
                     {"delta_vs_baseline", number_or_null(f.delta_vs_baseline)},
                     {"deltas_vs_baseline", deltas}});
  }
  json out = {{"schema_version", kSchemaVersion},
              {"run", run_json(t.run, true)},
              {"commit", commit_brief(v.commit)},
              {"testbed", v.testbed ? testbed_json(*v.testbed) : json(nullptr)},
              {"metric", v.facts.metric},
              {"lower_is_better", v.facts.lower_is_better},
              {"metrics", declared_metrics_json(v.facts)},
              {"manifest", store::to_json(v.facts)},
              {"variants", json::array()},
              {"points", json::array()},
              {"cells", std::move(cells)}};
  for (const auto& x : t.variants) out["variants"].push_back(variant_json(x));
  for (const auto& p : t.points) out["points"].push_back(point_json(p));
  return out;
}

std::string run_text(const RunView& v) {
  const store::RunTable& t = v.table;
  std::string out;
  const store::VariantRecord* base = v.baseline();
  // The columns are the run's declared metrics: the judged one with its CI
  // and trials, then the median of each other one, each headed by its unit.
  const store::ManifestMetricFacts* judged = nullptr;
  std::vector<const store::ManifestMetricFacts*> others;
  for (const auto& m : v.facts.metrics) {
    if (m.name == v.facts.metric) judged = &m;
    else others.push_back(&m);
  }
  const std::string unit = judged && !judged->unit.empty() ? judged->unit : v.facts.metric;
  size_t vw = 8;
  for (const auto& x : t.variants) vw = std::max(vw, x.name.size() + 2);
  size_t pw = 6;
  for (const auto& p : t.points) pw = std::max(pw, point_label(p).size() + 2);

  out += pad("point", pw) + pad("variant", vw) + lpad("median " + unit, 18) + "  " + pad("95% CI", 24) + lpad("trials", 7);
  for (const auto* m : others) out += lpad(m->unit.empty() ? m->name : m->unit, 14);
  out += std::string("  ") + "vs " + (base ? base->name : std::string("baseline")) + "\n";
  for (const auto& p : t.points) {
    for (const auto& x : t.variants) {
      std::size_t index = t.cells.size();
      for (std::size_t i = 0; i < t.cells.size(); ++i)
        if (t.cells[i].variant_id == x.id && t.cells[i].point_id == p.id) index = i;
      std::string line = pad(point_label(p), pw) + pad(x.name, vw);
      if (x.status == store::VariantStatus::kInfeasible) {
        out += line + "infeasible: " + x.reason + "\n";
        continue;
      }
      if (index == t.cells.size()) {
        out += line + "not measured\n";
        continue;
      }
      const store::RunTableCell& cell = t.cells[index];
      const RunCellFigures& f = v.figures[index];
      if (cell.check && cell.check->status != store::CheckStatus::kOk) {
        out += line + std::string(store::to_string(cell.check->status)) + ": " + cell.check->reason + "\n";
        continue;
      }
      if (!cell.summary || !cell.summary->median) {
        out += line + "no trials\n";
        continue;
      }
      const store::SummaryRecord& s = *cell.summary;
      line += lpad(fmt("%.2f", *s.median), 18) + "  ";
      line += pad("[" + fmt("%.2f", s.ci_low.value_or(NAN)) + ", " + fmt("%.2f", s.ci_high.value_or(NAN)) + "]", 24);
      line += lpad(std::to_string(s.n), 7);
      for (const auto* m : others) {
        auto it = cell.metrics.find(m->name);
        const bool has = it != cell.metrics.end() && it->second.median;
        line += lpad(has ? number_text(*it->second.median) : "-", 14);
      }
      line += "  ";
      if (base && x.id == base->id) {
        line += "baseline";
      } else if (f.delta_vs_baseline) {
        const double d = *f.delta_vs_baseline;
        bool better = v.facts.lower_is_better ? d < 0 : d > 0;
        line += fmt("%+.1f%%", d * 100) + (std::fabs(d) < 1e-12 ? "" : better ? " (better)" : " (worse)");
      } else {
        line += "-";
      }
      if (s.dropped_throttled > 0) line += "  [" + std::to_string(s.dropped_throttled) + " throttled dropped]";
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace perfwatch::views
