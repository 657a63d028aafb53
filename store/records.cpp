#include "store/records.h"

#include <array>
#include <utility>

namespace perfwatch::store {
namespace {

// One table per enum: the word stored in SQL for each value, in enum order.
template <class E, std::size_t N>
using Words = std::array<std::pair<E, std::string_view>, N>;

constexpr Words<BuildStatus, 3> kBuildStatus{{
    {BuildStatus::kOk, "ok"}, {BuildStatus::kFailed, "failed"}, {BuildStatus::kTimeout, "timeout"}}};
constexpr Words<Backend, 2> kBackend{{{Backend::kCpu, "cpu"}, {Backend::kCuda, "cuda"}}};
constexpr Words<RunKind, 3> kRunKind{{
    {RunKind::kBench, "bench"}, {RunKind::kNoise, "noise"}, {RunKind::kBaselineRerun, "baseline-rerun"}}};
constexpr Words<RunStatus, 10> kRunStatus{{{RunStatus::kRunning, "running"},
                                          {RunStatus::kOk, "ok"},
                                          {RunStatus::kBuildFailed, "build_failed"},
                                          {RunStatus::kCrashed, "crashed"},
                                          {RunStatus::kTimeout, "timeout"},
                                          {RunStatus::kProtocolError, "protocol_error"},
                                          {RunStatus::kCutOff, "cut_off"},
                                          {RunStatus::kFailed, "failed"},
                                          {RunStatus::kStoreFailed, "store_failed"},
                                          {RunStatus::kLost, "lost"}}};
constexpr Words<VariantStatus, 2> kVariantStatus{{{VariantStatus::kOk, "ok"}, {VariantStatus::kInfeasible, "infeasible"}}};
constexpr Words<CheckStatus, 4> kCheckStatus{{{CheckStatus::kOk, "ok"},
                                              {CheckStatus::kIncorrect, "incorrect"},
                                              {CheckStatus::kInfeasible, "infeasible"},
                                              {CheckStatus::kUnknown, "unknown"}}};
constexpr Words<NoiseSource, 3> kNoiseSource{{
    {NoiseSource::kAa, "aa"}, {NoiseSource::kHistory, "history"}, {NoiseSource::kDefault, "default"}}};
constexpr Words<ComparisonBasis, 2> kComparisonBasis{{
    {ComparisonBasis::kPrevious, "previous"}, {ComparisonBasis::kPinned, "pinned"}}};
constexpr Words<ChangeVerdict, 4> kChangeVerdict{{{ChangeVerdict::kRegression, "regression"},
                                                  {ChangeVerdict::kImprovement, "improvement"},
                                                  {ChangeVerdict::kWithinNoise, "within_noise"},
                                                  {ChangeVerdict::kUndecided, "undecided"}}};
constexpr Words<FlagKind, 4> kFlagKind{{{FlagKind::kRegression, "regression"},
                                        {FlagKind::kImprovement, "improvement"},
                                        {FlagKind::kChangepoint, "changepoint"},
                                        {FlagKind::kDrift, "drift"}}};
constexpr Words<ExperimentSource, 3> kExperimentSource{{
    {ExperimentSource::kAuto, "auto"}, {ExperimentSource::kTrailer, "trailer"}, {ExperimentSource::kManual, "manual"}}};
constexpr Words<ExperimentVerdict, 5> kExperimentVerdict{{{ExperimentVerdict::kAccepted, "accepted"},
                                                          {ExperimentVerdict::kRejected, "rejected"},
                                                          {ExperimentVerdict::kMixed, "mixed"},
                                                          {ExperimentVerdict::kNoEffect, "no_effect"},
                                                          {ExperimentVerdict::kPending, "pending"}}};
constexpr Words<JobKind, 3> kJobKind{{{JobKind::kBench, "bench"}, {JobKind::kNoise, "noise"}, {JobKind::kBackfill, "backfill"}}};
constexpr Words<GroupTriage, 5> kGroupTriage{{{GroupTriage::kAcknowledged, "acknowledged"},
                                              {GroupTriage::kInvalid, "invalid"},
                                              {GroupTriage::kExpected, "expected"},
                                              {GroupTriage::kRecovered, "recovered"},
                                              {GroupTriage::kRecovery, "recovery"}}};
constexpr Words<JobState, 7> kJobState{{{JobState::kQueued, "queued"},
                                        {JobState::kRunning, "running"},
                                        {JobState::kDone, "done"},
                                        {JobState::kFailed, "failed"},
                                        {JobState::kCutOff, "cut_off"},
                                        {JobState::kSkipped, "skipped"},
                                        {JobState::kGaveUp, "gave_up"}}};

template <class E, std::size_t N>
std::string_view word(const Words<E, N>& words, E value) {
  for (const auto& [v, w] : words)
    if (v == value) return w;
  return "?";
}

template <class E, std::size_t N>
std::optional<E> value(const Words<E, N>& words, std::string_view s) {
  for (const auto& [v, w] : words)
    if (w == s) return v;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(BuildStatus v) { return word(kBuildStatus, v); }
std::string_view to_string(Backend v) { return word(kBackend, v); }
std::string_view to_string(RunKind v) { return word(kRunKind, v); }
std::string_view to_string(RunStatus v) { return word(kRunStatus, v); }
std::string_view to_string(VariantStatus v) { return word(kVariantStatus, v); }
std::string_view to_string(CheckStatus v) { return word(kCheckStatus, v); }
std::string_view to_string(NoiseSource v) { return word(kNoiseSource, v); }
std::string_view to_string(ComparisonBasis v) { return word(kComparisonBasis, v); }
std::string_view to_string(ChangeVerdict v) { return word(kChangeVerdict, v); }
std::string_view to_string(FlagKind v) { return word(kFlagKind, v); }
std::string_view to_string(GroupTriage v) { return word(kGroupTriage, v); }
std::string_view to_string(ExperimentSource v) { return word(kExperimentSource, v); }
std::string_view to_string(ExperimentVerdict v) { return word(kExperimentVerdict, v); }
std::string_view to_string(JobKind v) { return word(kJobKind, v); }
std::string_view to_string(JobState v) { return word(kJobState, v); }

std::optional<BuildStatus> parse_build_status(std::string_view s) { return value(kBuildStatus, s); }
std::optional<Backend> parse_backend(std::string_view s) { return value(kBackend, s); }
std::optional<RunKind> parse_run_kind(std::string_view s) { return value(kRunKind, s); }
std::optional<RunStatus> parse_run_status(std::string_view s) { return value(kRunStatus, s); }
std::optional<VariantStatus> parse_variant_status(std::string_view s) { return value(kVariantStatus, s); }
std::optional<CheckStatus> parse_check_status(std::string_view s) { return value(kCheckStatus, s); }
std::optional<NoiseSource> parse_noise_source(std::string_view s) { return value(kNoiseSource, s); }
std::optional<ComparisonBasis> parse_comparison_basis(std::string_view s) { return value(kComparisonBasis, s); }
std::optional<ChangeVerdict> parse_change_verdict(std::string_view s) { return value(kChangeVerdict, s); }
std::optional<FlagKind> parse_flag_kind(std::string_view s) { return value(kFlagKind, s); }
std::optional<GroupTriage> parse_group_triage(std::string_view s) { return value(kGroupTriage, s); }
std::optional<ExperimentSource> parse_experiment_source(std::string_view s) { return value(kExperimentSource, s); }
std::optional<ExperimentVerdict> parse_experiment_verdict(std::string_view s) { return value(kExperimentVerdict, s); }
std::optional<JobKind> parse_job_kind(std::string_view s) { return value(kJobKind, s); }
std::optional<JobState> parse_job_state(std::string_view s) { return value(kJobState, s); }

}  // namespace perfwatch::store
