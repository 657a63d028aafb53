// One bench run after the plan: answers measure requests in order, following
// the protocol's rules (schemas/bench/measure.schema.json):
//  - the first request for a (variant, point) gets a check line: the
//    variant's output on the point's check set against the float64 reference;
//  - only a pair whose check is ok is timed: a warm-up, then `trials` trial
//    lines numbered on from the pair's previous trials; any other pair gets a
//    skipped line (incorrect, infeasible, or unknown for names not in the plan).
// One point's workload is resident at a time (prepared lazily, regenerated
// identically if the runner comes back to it); each point's reference is
// computed once and shared by every variant.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lines.h"
#include "mla/backend.h"
#include "mla/reference.h"
#include "plan.h"

namespace mla::bench {

class Session {
 public:
  Session(Plan plan, std::uint64_t seed, Backend& backend, LineWriter& out);

  // One variant line per plan variant, in plan order.
  void write_variants();

  // Writes the request's answer. Throws mla::Error (or another std::exception)
  // when the backend fails in a way the bench cannot go on from.
  void measure(const MeasureRequest& request);

 private:
  struct Pair {
    bool checked = false;
    std::string status;   // ok, incorrect, infeasible
    std::string reason;   // why not ok
    long long trials = 0;
    long long warm_generation = -1;  // the workload generation it was last warmed up on
  };

  void check(int variant, int point, Pair& pair);
  // The point's workload, prepared if it is not the resident one; nullptr when
  // it cannot be prepared, with the reason in *why.
  Workload* workload_for(int point, std::string* why);
  const ReferenceOutputs& reference_for(int point, const Workload& workload);

  Plan plan_;
  Dialect dialect_;
  std::uint64_t seed_;
  Backend& backend_;
  LineWriter& out_;
  std::vector<VariantReport> reports_;
  std::map<std::pair<int, int>, Pair> pairs_;
  int resident_point_ = -1;
  std::unique_ptr<Workload> workload_;
  long long generation_ = 0;  // counts prepares: a new workload wants a new warm-up
  std::map<int, std::string> prepare_failures_;
  std::map<int, ReferenceOutputs> references_;
};

}  // namespace mla::bench
