#include "daemon/manual_experiment.h"

#include "judge/bands.h"
#include "daemon/bench_commit.h"
#include "judge/experiments.h"
#include "judge/comparisons.h"
#include "judge/commit_runs.h"
#include "store/experiment_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::daemon {

// The judging vocabulary this file speaks.
using judge::Bands;
using judge::PointNames;
using judge::CommitRuns;
using judge::commit_runs;
using judge::Cell;
using judge::commit_source;
using judge::direction_of;
using judge::evidence_records;
using judge::compare_commits;
using judge::to_store;


using nlohmann::json;

namespace {

constexpr std::string_view kVariantPrefix = "variant:";

bool is_variant(const std::string& spec) { return spec.rfind(kVariantPrefix, 0) == 0; }
std::string variant_name(const std::string& spec) { return spec.substr(kVariantPrefix.size()); }

// The testbed of the newest ok bench run of a commit.
Result<std::optional<store::TestbedId>> testbed_of(store::Database& db, store::CommitId commit) {
  auto runs = store::RunReader(db).runs_of_commit(commit);
  if (!runs) return fail(runs.error());
  for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
    if (it->status == store::RunStatus::kOk && it->testbed_id) return it->testbed_id;
  }
  return std::optional<store::TestbedId>{};
}

}  // namespace

Result<store::ExperimentId> record_manual_experiment(Context& ctx, const ManualExperiment& req) {
  if (req.hypothesis.empty()) return fail(invalid_argument("--hypothesis", "must not be empty"));
  if (req.candidates.empty()) return fail(invalid_argument("--candidate", "name at least one"));
  const bool variants = is_variant(req.baseline);
  for (const auto& c : req.candidates) {
    if (is_variant(c) != variants) {
      return fail(invalid_argument("--candidate " + c, "the baseline and the candidates must all be commits or all "
                                                       "variants (variant:NAME)"));
    }
  }
  store::ExperimentRecord e;
  e.repo_id = ctx.repo;
  e.hypothesis = req.hypothesis;
  e.source = store::ExperimentSource::kManual;
  e.group_key = req.group;
  std::vector<store::EvidenceRecord> evidence;
  std::vector<analysis::EvidenceRow> all_rows;
  PointNames names(ctx.db);

  auto record_of = [&](const std::string& rev, const std::string& flag) -> Result<store::CommitRecord> {
    auto sha = ctx.git.resolve(rev);
    if (!sha) return fail(invalid_argument(flag + " " + rev, sha.error().message));
    auto found = store::RepoReader(ctx.db).find_commit(ctx.repo, *sha);
    if (!found) return fail(found.error());
    if (*found) return **found;
    auto manifest = manifest_for(ctx.git, *sha, ctx.options.manifest_path);
    if (!manifest) return fail(manifest.error());
    auto id = record_commit(ctx.db, ctx.repo, ctx.git, *sha, *manifest);
    if (!id) return fail(id.error());
    return store::RepoReader(ctx.db).commit(*id);
  };

  if (variants) {
    auto commit = record_of(req.commit, "--commit");
    if (!commit) return fail(commit.error());
    auto manifest = manifest_for(ctx.git, commit->sha, ctx.options.manifest_path);
    if (!manifest) return fail(manifest.error());
    const std::string base = variant_name(req.baseline);
    auto spec_of = [&](const std::string& name) -> const runner::VariantSpec* {
      for (const auto& v : manifest->variants) {
        if (v.name == name) return &v;
      }
      return nullptr;
    };
    if (!spec_of(base)) return fail(invalid_argument("--baseline " + req.baseline, "no such variant in the manifest"));
    e.metric = manifest->metric.name;
    e.baseline = json{{"variant", base}, {"params", spec_of(base)->params}, {"commit", commit->sha}};
    e.refs.push_back({commit->id, std::nullopt, "commit"});
    auto testbed = testbed_of(ctx.db, commit->id);
    if (!testbed) return fail(testbed.error());
    e.testbed_id = *testbed;
    std::optional<CommitRuns> runs;
    if (*testbed) {
      auto r = commit_runs(ctx.db, commit->id, **testbed);
      if (!r) return fail(r.error());
      runs = std::move(*r);
    }
    Bands bands(ctx.db, analysis::BandPolicy{.default_rel = manifest->default_band,
                                             .reference_runs = manifest->runs.per_commit});
    for (const auto& c : req.candidates) {
      const std::string name = variant_name(c);
      const runner::VariantSpec* spec = spec_of(name);
      if (!spec) return fail(invalid_argument("--candidate " + c, "no such variant in the manifest"));
      e.candidates.push_back(json{{"name", name}, {"params", spec->params}, {"commit", commit->sha}});
      if (!runs) continue;
      std::map<store::PointId, std::pair<std::vector<double>, std::vector<double>>> pairs;
      for (const auto& [run, cells] : runs->by_run()) {
        for (const auto& [cell, value] : cells) {
          if (cell.variant != name) continue;
          auto b = cells.find(Cell{base, cell.point});
          if (b == cells.end()) continue;
          pairs[cell.point].first.push_back(b->second);
          pairs[cell.point].second.push_back(value);
        }
      }
      std::vector<analysis::EvidenceRow> rows;
      std::vector<store::PointId> points;
      for (const auto& [point, values] : pairs) {
        // The stored paired band is of `name` against the manifest's baseline.
        analysis::NoiseBand band = analysis::paired_noise_band(analysis::NoiseEvidence{}, bands.policy());
        if (base == manifest->baseline().name) {
          auto b = bands.band(**testbed, name, point, true, {commit_source(commit->id)});
          if (!b) return fail(b.error());
          band = *b;
        }
        rows.push_back(analysis::compare_paired(names.key(point), values.first, values.second, band,
                                                direction_of(*manifest), ctx.options.policy));
        points.push_back(point);
      }
      for (auto& r : evidence_records(name, points, rows)) evidence.push_back(r);
      all_rows.insert(all_rows.end(), rows.begin(), rows.end());
    }
  } else {
    auto base = record_of(req.baseline, "--baseline");
    if (!base) return fail(base.error());
    e.baseline = json{{"commit", base->sha}, {"subject", base->subject}};
    e.refs.push_back({base->id, std::nullopt, "baseline"});
    auto testbed = testbed_of(ctx.db, base->id);
    if (!testbed) return fail(testbed.error());
    e.testbed_id = *testbed;
    for (const auto& c : req.candidates) {
      auto cand = record_of(c, "--candidate");
      if (!cand) return fail(cand.error());
      e.candidates.push_back(json{{"commit", cand->sha}, {"subject", cand->subject}});
      e.refs.push_back({cand->id, std::nullopt, "candidate"});
      auto manifest = manifest_for(ctx.git, cand->sha, ctx.options.manifest_path);
      if (!manifest) return fail(manifest.error());
      e.metric = manifest->metric.name;
      if (!*testbed) continue;
      auto a_runs = commit_runs(ctx.db, base->id, **testbed);
      auto b_runs = commit_runs(ctx.db, cand->id, **testbed);
      if (!a_runs) return fail(a_runs.error());
      if (!b_runs) return fail(b_runs.error());
      Bands bands(ctx.db, analysis::BandPolicy{.default_rel = manifest->default_band,
                                               .reference_runs = manifest->runs.per_commit});
      auto cells = compare_commits(bands, **testbed, base->id, *a_runs, cand->id, *b_runs, direction_of(*manifest),
                                   ctx.options.policy);
      if (!cells) return fail(cells.error());
      const std::string label = req.candidates.size() == 1 ? "" : cand->sha.substr(0, 10) + " ";
      for (const auto& cell : *cells) {
        analysis::EvidenceRow row = analysis::evidence_row(names.key(cell.cell.point), cell.a, cell.b, cell.comparison);
        for (auto& r : evidence_records(label + cell.cell.variant, {cell.cell.point}, {row})) evidence.push_back(r);
        all_rows.push_back(row);
      }
    }
  }
  e.verdict = all_rows.empty() ? store::ExperimentVerdict::kPending
                               : to_store(analysis::experiment_verdict(all_rows).verdict);
  store::ExperimentWriter writer(ctx.db);
  auto id = writer.put_experiment(e);
  if (!id) return fail(id.error());
  for (auto& r : evidence) r.experiment_id = *id;
  if (auto s = writer.set_evidence(*id, evidence); !s) return fail(s.error());
  return *id;
}

}  // namespace perfwatch::daemon
