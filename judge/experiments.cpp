#include "judge/experiments.h"

#include <map>

namespace perfwatch::judge {

using nlohmann::json;

store::ExperimentVerdict to_store(analysis::ExperimentVerdict verdict) {
  switch (verdict) {
    case analysis::ExperimentVerdict::kAccepted: return store::ExperimentVerdict::kAccepted;
    case analysis::ExperimentVerdict::kRejected: return store::ExperimentVerdict::kRejected;
    case analysis::ExperimentVerdict::kMixed: return store::ExperimentVerdict::kMixed;
    case analysis::ExperimentVerdict::kNoEffect: return store::ExperimentVerdict::kNoEffect;
  }
  return store::ExperimentVerdict::kPending;
}

store::ChangeVerdict to_store(analysis::PointVerdict verdict) {
  switch (verdict) {
    case analysis::PointVerdict::kBetter: return store::ChangeVerdict::kImprovement;
    case analysis::PointVerdict::kWorse: return store::ChangeVerdict::kRegression;
    case analysis::PointVerdict::kNoEffect: return store::ChangeVerdict::kWithinNoise;
    case analysis::PointVerdict::kUndecided: return store::ChangeVerdict::kUndecided;
  }
  return store::ChangeVerdict::kUndecided;
}

std::vector<store::EvidenceRecord> evidence_records(const std::string& candidate,
                                                    const std::vector<store::PointId>& points,
                                                    const std::vector<analysis::EvidenceRow>& rows) {
  std::vector<store::EvidenceRecord> out;
  for (std::size_t i = 0; i < rows.size() && i < points.size(); ++i) {
    const auto& row = rows[i];
    store::EvidenceRecord e;
    e.candidate = candidate;
    e.point_id = points[i];
    e.baseline_value = row.baseline;
    e.candidate_value = row.candidate;
    e.delta_rel = row.delta_rel;
    e.band_rel = row.band_rel;
    e.band_calibrated = row.band_calibrated;
    e.p_value = row.p_value;
    e.runs = row.runs;
    e.verdict = to_store(row.verdict);
    out.push_back(e);
  }
  return out;
}

namespace {

const runner::VariantSpec* find_variant(const runner::Manifest& m, const std::string& name) {
  for (const auto& v : m.variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace

Result<std::vector<store::ExperimentId>> record_variant_experiments(
    store::Database& db, Bands& bands, const runner::Manifest& manifest, store::RepoId repo,
    const store::CommitRecord& commit, store::TestbedId testbed, const CommitRuns& runs, PointNames& names,
    const analysis::ComparePolicy& policy) {
  std::vector<store::ExperimentId> ids;
  const std::string base = manifest.baseline().name;
  const auto by_run = runs.by_run();
  const analysis::Direction direction = direction_of(manifest);
  store::ExperimentWriter writer(db);

  // Candidate -> point -> (baseline, candidate) medians of the runs that measured both.
  std::map<std::string, std::map<store::PointId, std::pair<std::vector<double>, std::vector<double>>>> pairs;
  std::map<std::string, std::vector<store::RunId>> runs_of;
  for (const auto& [run, cells] : by_run) {
    for (const auto& [cell, value] : cells) {
      if (cell.variant == base) continue;
      auto b = cells.find(Cell{base, cell.point});
      if (b == cells.end()) continue;
      auto& p = pairs[cell.variant][cell.point];
      p.first.push_back(b->second);
      p.second.push_back(value);
      auto& r = runs_of[cell.variant];
      if (r.empty() || r.back() != run) r.push_back(run);
    }
  }

  const std::string source = commit_source(commit.id);
  for (const auto& [candidate, points] : pairs) {
    std::vector<analysis::EvidenceRow> rows;
    std::vector<store::PointId> point_ids;
    for (const auto& [point, values] : points) {
      auto band = bands.band(testbed, candidate, point, /*paired=*/true, {source});
      if (!band) return fail(band.error());
      rows.push_back(analysis::compare_paired(names.key(point), values.first, values.second, *band, direction,
                                              policy));
      point_ids.push_back(point);
    }
    const analysis::ExperimentSummary summary = analysis::experiment_verdict(rows);

    store::ExperimentRecord e;
    e.ident = "auto:" + std::to_string(repo) + ":" + commit.sha + ":" + candidate;
    e.repo_id = repo;
    const runner::VariantSpec* spec = find_variant(manifest, candidate);
    const runner::VariantSpec& base_spec = manifest.baseline();
    e.hypothesis = spec && !spec->hypothesis.empty() ? spec->hypothesis
                                                     : candidate + " against the baseline variant " + base;
    e.source = store::ExperimentSource::kAuto;
    e.metric = manifest.metric.name;
    e.testbed_id = testbed;
    e.baseline = json{{"variant", base}, {"params", base_spec.params}, {"commit", commit.sha}};
    e.candidates = json::array({json{{"name", candidate},
                                     {"params", spec ? spec->params : json::object()},
                                     {"commit", commit.sha}}});
    e.verdict = to_store(summary.verdict);
    e.refs.push_back({commit.id, std::nullopt, "commit"});
    for (store::RunId run : runs_of[candidate]) e.refs.push_back({std::nullopt, run, "run"});
    auto id = writer.put_experiment(e);
    if (!id) return fail(id.error());
    auto records = evidence_records(candidate, point_ids, rows);
    for (auto& r : records) r.experiment_id = *id;
    if (auto s = writer.set_evidence(*id, records); !s) return fail(s.error());
    ids.push_back(*id);

    // What the runs say about the noise of this ratio, for later commits.
    for (const auto& [point, values] : points) {
      std::vector<double> ratios;
      for (std::size_t i = 0; i < values.first.size(); ++i) ratios.push_back(values.second[i] / values.first[i]);
      if (auto s = bands.add_group(testbed, candidate, point, /*paired=*/true, source, store::EvidenceKind::kHistory,
                                   ratios);
          !s) {
        return fail(s.error());
      }
    }
  }
  return ids;
}

Result<std::optional<store::ExperimentId>> record_trailer_experiment(
    store::Database& db, const runner::Manifest& manifest, store::RepoId repo, const store::CommitRecord& commit,
    const store::CommitRecord& baseline, store::TestbedId testbed, const std::vector<CellComparison>& cells,
    PointNames& names) {
  if (commit.perf_hypothesis.empty() && commit.perf_experiment.empty()) return std::nullopt;
  if (cells.empty()) return std::nullopt;
  std::map<std::string, std::pair<std::vector<store::PointId>, std::vector<analysis::EvidenceRow>>> by_variant;
  std::vector<analysis::EvidenceRow> all;
  for (const auto& c : cells) {
    analysis::EvidenceRow row = analysis::evidence_row(names.key(c.cell.point), c.a, c.b, c.comparison);
    auto& v = by_variant[c.cell.variant];
    v.first.push_back(c.cell.point);
    v.second.push_back(row);
    all.push_back(row);
  }
  const analysis::ExperimentSummary summary = analysis::experiment_verdict(all);
  store::ExperimentRecord e;
  e.ident = "trailer:" + std::to_string(repo) + ":" + commit.sha;
  e.repo_id = repo;
  e.hypothesis = !commit.perf_hypothesis.empty() ? commit.perf_hypothesis : commit.subject;
  e.source = store::ExperimentSource::kTrailer;
  e.group_key = commit.perf_experiment;
  e.metric = manifest.metric.name;
  e.testbed_id = testbed;
  e.baseline = json{{"commit", baseline.sha}, {"subject", baseline.subject}};
  e.candidates = json::array({json{{"commit", commit.sha}, {"subject", commit.subject}}});
  e.verdict = to_store(summary.verdict);
  e.refs.push_back({baseline.id, std::nullopt, "baseline"});
  e.refs.push_back({commit.id, std::nullopt, "candidate"});
  store::ExperimentWriter writer(db);
  auto id = writer.put_experiment(e);
  if (!id) return fail(id.error());
  std::vector<store::EvidenceRecord> records;
  for (const auto& [variant, rows] : by_variant) {
    for (auto& r : evidence_records(variant, rows.first, rows.second)) {
      r.experiment_id = *id;
      records.push_back(r);
    }
  }
  if (auto s = writer.set_evidence(*id, records); !s) return fail(s.error());
  return *id;
}

}  // namespace perfwatch::judge
