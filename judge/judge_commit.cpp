#include "judge/judge_commit.h"

#include <algorithm>
#include <utility>

#include "judge/cell_history.h"
#include "judge/commit_runs.h"
#include "judge/drift.h"
#include "judge/experiments.h"
#include "judge/located_steps.h"
#include "store/analysis_store.h"
#include "store/experiment_store.h"
#include "store/history_store.h"
#include "store/repo_store.h"
#include "store/run_store.h"

namespace perfwatch::judge {

namespace {

analysis::BandPolicy band_policy(const runner::Manifest& manifest) {
  return analysis::BandPolicy{.default_rel = manifest.default_band, .reference_runs = manifest.runs.per_commit};
}

ComparisonTally tally(std::string commit, std::string against, std::string basis,
                      const std::vector<CellComparison>& cells) {
  ComparisonTally t{std::move(commit), std::move(against), std::move(basis), {}};
  for (const char* v : {"regression", "improvement", "within_noise", "undecided"}) t.verdicts[v] = 0;
  for (const auto& c : cells) ++t.verdicts[analysis::to_string(c.comparison.verdict)];
  return t;
}

// One judging pass; the members are what every step shares.
class Judging {
 public:
  Judging(store::Database& db, const JudgeRequest& r)
      : db_(db), r_(r), manifest_(*r.manifest), bands_(db, band_policy(*r.manifest)), names_(db),
        direction_(direction_of(*r.manifest)),
        history_{r.repo, r.commit, r.testbed, r.change_point_window, direction_, r.policy} {}

  Result<JudgeResult> run() {
    auto b_runs = commit_runs(db_, r_.commit.id, r_.testbed);
    if (!b_runs) return fail(b_runs.error());
    b_runs_ = std::move(*b_runs);
    if (auto s = pooled_values(); !s) return fail(s.error());
    if (auto s = with_previous(); !s) return fail(s.error());
    if (auto s = rejudge_grown(); !s) return fail(s.error());
    if (auto s = levels(); !s) return fail(s.error());
    if (auto s = noise_evidence(); !s) return fail(s.error());
    if (auto s = experiments(); !s) return fail(s.error());
    if (auto s = change_points(); !s) return fail(s.error());
    if (auto s = recoveries(); !s) return fail(s.error());
    return std::move(out_);
  }

 private:
  Status pooled_values() {
    const std::string& metric = manifest_.metric.name;
    if (auto s = store_commit_summaries(db_, r_.commit.id, r_.testbed, metric, b_runs_); !s) return s;
    for (store::CommitId id : r_.grown) {
      auto runs = commit_runs(db_, id, r_.testbed);
      if (!runs) return fail(runs.error());
      if (auto s = store_commit_summaries(db_, id, r_.testbed, metric, *runs); !s) return s;
    }
    return {};
  }

  // Compares `commit` with `against` (basis previous), stores it and judges its flags.
  Result<std::vector<CellComparison>> judge_pair(const store::CommitRecord& against, const CommitRuns& a_runs,
                                                 const store::CommitRecord& commit, const CommitRuns& b_runs,
                                                 const std::map<Cell, nlohmann::json>& change_points,
                                                 const std::string& basis) {
    auto cells = compare_commits(bands_, r_.testbed, against.id, a_runs, commit.id, b_runs, direction_, r_.policy);
    if (!cells) return fail(cells.error());
    if (auto s = store_comparisons(db_, commit.id, against.id, store::ComparisonBasis::kPrevious, r_.testbed,
                                   manifest_.metric.name, *cells);
        !s) {
      return fail(s.error());
    }
    out_.comparisons.push_back(tally(commit.sha, against.sha, basis, *cells));
    auto flags = judge_step_flags(db_, FlagScope{commit.id, r_.testbed, against.sha}, *cells, change_points);
    if (!flags) return fail(flags.error());
    for (auto& f : *flags) out_.flags.push_back(std::move(f));
    judged_.insert({commit.id, against.id});
    return cells;
  }

  Status with_previous() {
    if (!r_.previous) return {};
    auto a_runs = commit_runs(db_, r_.previous->id, r_.testbed);
    if (!a_runs) return fail(a_runs.error());
    a_runs_ = std::move(*a_runs);
    auto cells = judge_pair(*r_.previous, *a_runs_, r_.commit, b_runs_, r_.confirm, "previous");
    if (!cells) return fail(cells.error());
    cells_ = std::move(*cells);
    auto trailer = record_trailer_experiment(db_, manifest_, r_.repo, r_.commit, *r_.previous, r_.testbed, cells_,
                                             names_);
    if (!trailer) return fail(trailer.error());
    if (*trailer) out_.experiments.push_back({**trailer, "trailer", r_.commit.sha.substr(0, 10), ""});
    return {};
  }

  // Every stored comparison whose evidence grew in this job, judged again.
  Status rejudge_grown() {
    std::set<store::CommitId> touched = r_.grown;
    touched.insert(r_.commit.id);
    store::AnalysisReader analysis(db_);
    store::RepoReader repos(db_);
    for (store::CommitId x : touched) {
      // x against its own predecessor.
      if (x != r_.commit.id) {
        auto prev = store::HistoryReader(db_).previous_measured(x, r_.testbed);
        if (!prev) return fail(prev.error());
        if (*prev) {
          if (auto s = rejudge(**prev, x); !s) return s;
        }
      }
      // The commits that use x as their reference.
      auto against = analysis.comparisons_against(x);
      if (!against) return fail(against.error());
      std::set<store::CommitId> successors;
      for (const auto& c : *against) {
        if (c.basis == store::ComparisonBasis::kPrevious && c.testbed_id == r_.testbed) successors.insert(c.commit_id);
      }
      for (store::CommitId s_id : successors) {
        auto x_rec = repos.commit(x);
        if (!x_rec) return fail(x_rec.error());
        if (auto s = rejudge(*x_rec, s_id); !s) return s;
      }
    }
    return {};
  }

  Status rejudge(const store::CommitRecord& against, store::CommitId commit) {
    if (judged_.count({commit, against.id})) return {};
    auto rec = store::RepoReader(db_).commit(commit);
    if (!rec) return fail(rec.error());
    auto a = commit_runs(db_, against.id, r_.testbed);
    auto b = commit_runs(db_, commit, r_.testbed);
    if (!a) return fail(a.error());
    if (!b) return fail(b.error());
    if (a->empty() || b->empty()) return {};
    auto cells = judge_pair(against, *a, *rec, *b, {}, "rejudged");
    if (!cells) return fail(cells.error());
    return {};
  }

  // Steps the commit comparisons missed, located over each cell's level
  // (located_steps.h), then drift: slides against the cell's level
  // (drift.h). Not in a confirmation job: these looks are over the history
  // up to the head, judged once when a commit is new there.
  Status levels() {
    if (!r_.confirm.empty()) return {};
    if (auto s = pinned_comparison(); !s) return s;
    for (const auto& [cell, values] : b_runs_.values()) {
      auto history = CellHistory::read(db_, history_, cell, names_);
      if (!history) return fail(history.error());
      auto steps = locate_steps(bands_, history_, cell, *history);
      if (!steps) return fail(steps.error());
      // A drift is judged only where the level moved and a slide explains
      // it better than one step (located_steps.h), so both looks agree.
      const std::size_t events = out_.flags.size();
      bool sliding = false;
      const LocatedStep* going_on = nullptr;  // the tail of the drift flag that starts the stretch
      for (const LocatedStep& step : *steps) {
        auto stepped = located_step(step);
        if (!stepped) return fail(stepped.error());
        sliding = sliding || (!*stepped && step.shape == LocatedStep::Shape::kSlide && !step.rejudged);
        if (!step.rejudged && step.drift_going_on) going_on = &step;
      }
      if (!sliding) continue;
      // A located flag judged again may have changed the history read.
      if (out_.flags.size() != events) history = CellHistory::read(db_, history_, cell, names_);
      if (!history) return fail(history.error());
      auto drift = level_drift(bands_, history_, cell, *history);
      if (!drift) return fail(drift.error());
      // The drift going on extends its flag: through the head when the head
      // is still sliding away from the level, else through the located step.
      // Never a second drift flag for it.
      if (*drift && (!going_on || (*drift)->extends)) {
        if (auto s = slide(**drift); !s) return s;
      } else if (going_on && going_on->extends) {
        if (auto s = extend_through(*going_on); !s) return s;
      }
    }
    return {};
  }

  // A located step that is the drift going on (located_steps.h): its flag
  // now reaches the step's commit, and its magnitude the whole slide.
  Status extend_through(const LocatedStep& step) {
    const store::FlagRecord& flag = *step.extends;
    const double total = (1 + flag.detail.value("first_rel", flag.magnitude_rel)) * step.comparison.ratio - 1;
    auto e = extend_drift_flag(db_, flag, total, step.sha, step.comparison);
    if (!e) return fail(e.error());
    out_.flags.push_back(std::move(*e));
    return {};
  }

  // Flags (or confirms) a located step; says whether the cell's change is
  // taken as a step here, so that it is not also judged as drift.
  Result<bool> located_step(const LocatedStep& step) {
    if (!step.rejudged) {
      if (step.shape == LocatedStep::Shape::kSlide) return false;
      // Which commit it is, and whether it is one, needs more runs around
      // it while they can have them: the likeliest commit is the best answer
      // only once its neighbours are at their budget.
      auto settled = [&](store::CommitId id) -> Result<bool> {
        if (id == 0) return true;
        auto processes = bench_processes(db_, id, r_.testbed);
        if (!processes) return fail(processes.error());
        return *processes >= manifest_.runs.max_per_commit;
      };
      auto before = settled(step.previous_commit), at = settled(step.commit), after = settled(step.next_commit);
      if (!before || !at || !after) return fail(!before ? before.error() : !at ? at.error() : after.error());
      const bool clear = step.shape == LocatedStep::Shape::kStep && step.location_margin >= kLocationMargin;
      if (!clear && (!*before || !*at || !*after)) {
        // A confirmation grows a commit and its predecessor: the step's
        // own commit, or the one after it when those two are at budget.
        ConfirmRequest c;
        c.sha = !*before || !*at ? step.sha : step.next_sha;
        c.cell = step.cell;
        c.point_key = names_.key(step.cell.point);
        c.change_point.p_value = step.comparison.p_value;
        c.change_point.mean_before = 1;
        c.change_point.mean_after = step.comparison.ratio;
        c.change_point_sha = step.sha;
        out_.confirms.push_back(std::move(c));
        return true;
      }
      if (step.shape == LocatedStep::Shape::kUnclear) return true;  // the next commits tell
    }
    CellComparison cell{step.cell, {}, {}, step.comparison, 0};
    auto events = judge_step_flags(db_, FlagScope{step.commit, r_.testbed, step.reference_sha},
                                   std::span<const CellComparison>(&cell, 1), {}, "level", step.detail);
    if (!events) return fail(events.error());
    for (auto& e : *events) out_.flags.push_back(std::move(e));
    return !step.rejudged;
  }

  // The pinned comparison is stored for reading ("how far from the
  // release"); it raises no flag: the level since the newest flag is the
  // steadier reference, where a missed or misjudged step since the pin
  // would bias every later pinned judgement.
  Status pinned_comparison() {
    if (!r_.pinned) return {};
    const bool reruns = !r_.pinned_reruns.empty();
    std::optional<std::set<store::RunId>> only;
    if (reruns) only = r_.pinned_reruns;
    auto p_runs = commit_runs(db_, r_.pinned->id, r_.testbed,
                              reruns ? store::RunKind::kBaselineRerun : store::RunKind::kBench, only);
    if (!p_runs) return fail(p_runs.error());
    if (p_runs->empty()) return {};
    auto compared = compare_commits(bands_, r_.testbed, r_.pinned->id, *p_runs, r_.commit.id, b_runs_, direction_,
                                    r_.policy);
    if (!compared) return fail(compared.error());
    if (auto s = store_comparisons(db_, r_.commit.id, r_.pinned->id, store::ComparisonBasis::kPinned, r_.testbed,
                                   manifest_.metric.name, *compared);
        !s) {
      return s;
    }
    out_.comparisons.push_back(tally(r_.commit.sha, r_.pinned->sha, "pinned", *compared));
    return {};
  }

  // A slide: a drift flag once per slide. A change whose start is at or
  // near the head is a step, which located_steps judges.
  Status slide(Drift& d) {
    if (d.shape != Drift::Shape::kSlide) return {};
    if (d.extends) {
      auto e = extend_drift_flag(db_, *d.extends, d.total_rel, r_.commit.sha, d.comparison);
      if (!e) return fail(e.error());
      out_.flags.push_back(std::move(*e));
      return {};
    }
    std::string reference;
    if (d.detail["reference"].is_array() && !d.detail["reference"].empty())
      reference = d.detail["reference"][0].get<std::string>();
    d.detail["first_rel"] = d.unexplained_rel;
    auto events = raise_drift_flag(db_, FlagScope{r_.commit.id, r_.testbed, reference}, d.cell, d.comparison,
                                   d.comparison_id, d.unexplained_rel, d.detail);
    if (!events) return fail(events.error());
    for (auto& e : *events) out_.flags.push_back(std::move(e));
    return {};
  }

  // This commit's runs (and the previous commit's, if they grew) are groups
  // of one build; identical bench binaries make a pair.
  Status noise_evidence() {
    auto add_groups = [&](store::CommitId id, const CommitRuns& runs) -> Status {
      for (const auto& [cell, values] : runs.values()) {
        if (auto s = bands_.add_group(r_.testbed, cell.variant, cell.point, false, commit_source(id),
                                      store::EvidenceKind::kHistory, values);
            !s) {
          return s;
        }
      }
      return {};
    };
    if (auto s = add_groups(r_.commit.id, b_runs_); !s) return s;
    if (a_runs_ && r_.grown.count(r_.previous->id)) {
      if (auto s = add_groups(r_.previous->id, *a_runs_); !s) return s;
    }
    if (a_runs_) {
      const std::string hash = binary_of(r_.commit.id);
      if (!hash.empty() && hash == binary_of(r_.previous->id)) {
        const auto a_values = a_runs_->values();
        for (const auto& [cell, values] : b_runs_.values()) {
          auto it = a_values.find(cell);
          if (it == a_values.end()) continue;
          const std::string source =
              "pair:" + std::to_string(r_.previous->id) + "-" + std::to_string(r_.commit.id);
          if (auto s = bands_.add_unchanged_pair(r_.testbed, cell.variant, cell.point, source, it->second, values); !s)
            return s;
        }
        out_.unchanged_pair = r_.previous->sha;
        out_.binary_hash = hash;
      }
    }
    for (const auto& [cell, values] : b_runs_.values()) {
      if (auto band = bands_.publish(r_.testbed, cell.variant, cell.point); !band) return fail(band.error());
    }
    return {};
  }

  std::string binary_of(store::CommitId id) {
    auto runs = store::RunReader(db_).runs_of_commit(id);
    if (!runs) return "";
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
      if (it->status != store::RunStatus::kOk) continue;
      const nlohmann::json& p = it->provenance;
      if (p.contains("build") && p["build"].contains("binary_hash") && p["build"]["binary_hash"].is_string())
        return p["build"]["binary_hash"].get<std::string>();
    }
    return "";
  }

  Status experiments() {
    auto ids = record_variant_experiments(db_, bands_, manifest_, r_.repo, r_.commit, r_.testbed, b_runs_, names_,
                                          r_.policy);
    if (!ids) return fail(ids.error());
    for (store::ExperimentId id : *ids) {
      auto detail = store::ExperimentReader(db_).experiment(id);
      if (!detail) return fail(detail.error());
      const auto& e = detail->experiment;
      out_.experiments.push_back({id, "auto", e.candidates.empty() ? std::string() : e.candidates[0].value("name", ""),
                                  std::string(store::to_string(e.verdict))});
    }
    return {};
  }

  Status change_points() {
    if (!r_.confirm.empty() || !r_.previous) return {};
    std::vector<Cell> cells;
    for (const auto& [cell, values] : b_runs_.values()) cells.push_back(cell);
    ChangePointScope scope{history_, manifest_.runs.max_per_commit};
    auto requests = unexplained_change_points(db_, bands_, scope, cells, names_);
    if (!requests) return fail(requests.error());
    for (auto& r : *requests) out_.confirms.push_back(std::move(r));
    return {};
  }

  // Every commit that got a standing flag in this pass may undo an earlier
  // open group (a located step is flagged at its own commit, not the head).
  Status recoveries() {
    std::set<store::CommitId> flagged;
    for (const auto& e : out_.flags)
      if (e.flag.standing() && e.flag.testbed_id == r_.testbed) flagged.insert(e.flag.commit_id);
    store::RepoReader repos(db_);
    for (store::CommitId id : flagged) {
      auto commit = id == r_.commit.id ? Result<store::CommitRecord>(r_.commit) : repos.commit(id);
      if (!commit) return fail(commit.error());
      auto closed = close_recovered_groups(db_, r_.repo, *commit, r_.testbed);
      if (!closed) return fail(closed.error());
      for (auto& c : *closed) out_.recoveries.push_back(std::move(c));
    }
    return {};
  }

  store::Database& db_;
  const JudgeRequest& r_;
  const runner::Manifest& manifest_;
  Bands bands_;
  PointNames names_;
  analysis::Direction direction_;
  HistoryScope history_;  // for the looks over each cell's history (drift, change points)
  CommitRuns b_runs_;
  std::optional<CommitRuns> a_runs_;
  std::vector<CellComparison> cells_;
  std::set<std::pair<store::CommitId, store::CommitId>> judged_;  // (commit, against) judged in this pass
  JudgeResult out_;
};

}  // namespace

Result<JudgeResult> judge_commit(store::Database& db, const JudgeRequest& request) {
  return Judging(db, request).run();
}

Result<std::vector<CellComparison>> look(store::Database& db, const runner::Manifest& manifest,
                                         store::TestbedId testbed, store::CommitId against, store::CommitId commit,
                                         const analysis::ComparePolicy& policy) {
  auto a = commit_runs(db, against, testbed);
  auto b = commit_runs(db, commit, testbed);
  if (!a) return fail(a.error());
  if (!b) return fail(b.error());
  Bands bands(db, band_policy(manifest));
  return compare_commits(bands, testbed, against, *a, commit, *b, direction_of(manifest), policy);
}

}  // namespace perfwatch::judge
