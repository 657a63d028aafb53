#include "runner/protocol.h"

#include "common/text.h"

namespace perfwatch::runner {

using nlohmann::json;

const char* to_string(LineKind kind) {
  switch (kind) {
    case LineKind::kHeader: return "header";
    case LineKind::kVariant: return "variant";
    case LineKind::kCheck: return "check";
    case LineKind::kTrial: return "trial";
    case LineKind::kSkipped: return "skipped";
    case LineKind::kFooter: return "footer";
    case LineKind::kError: return "error";
  }
  return "?";
}

Result<Protocol> Protocol::load() {
  Protocol p;
  for (LineKind kind : {LineKind::kHeader, LineKind::kVariant, LineKind::kCheck, LineKind::kTrial, LineKind::kSkipped,
                        LineKind::kFooter, LineKind::kError}) {
    auto schema = schemas::Schema::load(std::string("bench/") + to_string(kind) + ".schema.json");
    if (!schema) return fail(schema.error());
    p.lines_.emplace_back(kind, std::move(*schema));
  }
  auto plan = schemas::Schema::load("bench/plan.schema.json");
  if (!plan) return fail(plan.error());
  p.plan_.push_back(std::move(*plan));
  return p;
}

Result<BenchLine> Protocol::parse(std::string_view text, int line_no) const {
  std::string where = "bench stdout line " + std::to_string(line_no);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    std::string shown = valid_utf8(text.substr(0, 120));
    return fail(protocol_error(where, "not a JSON object: '" + shown + (text.size() > 120 ? "...'" : "'")));
  }
  auto kind = doc.find("kind");
  if (kind == doc.end() || !kind->is_string()) return fail(protocol_error(where, "kind: missing"));
  for (const auto& [k, schema] : lines_) {
    if (*kind != to_string(k)) continue;
    if (auto ok = schema.validate(doc, where); !ok) {
      Error e = ok.error();
      e.code = ErrorCode::kProtocol;
      return fail(e);
    }
    return BenchLine{k, std::move(doc)};
  }
  return fail(protocol_error(where + ": kind", "'" + kind->get<std::string>() + "' is not a line the bench may write"));
}

Result<json> Protocol::make_plan(const Manifest& m, const std::vector<PointSpec>& points, std::uint64_t seed) const {
  json plan = {{"kind", "plan"}, {"schema_version", 1}, {"backend", m.bench.backend}, {"seed", seed}};
  json variants = json::array();
  for (const auto& v : m.variants) variants.push_back({{"name", v.name}, {"params", v.params}});
  plan["variants"] = variants;
  json pts = json::array();
  for (const auto& p : points) {
    pts.push_back({{"id", p.id}, {"batch", p.batch}, {"heads", p.heads}, {"topk", p.topk}, {"dtype", p.dtype}});
  }
  plan["points"] = pts;
  plan["check"] = {{"max_rel_l2_o", m.check.max_rel_l2_o},
                   {"max_abs_lse", m.check.max_abs_lse},
                   {"masked_fraction", m.check.masked_fraction}};
  plan["timing"] = {{"min_trial_ms", m.trials.min_trial_ms}, {"warmup_ms", m.trials.warmup_ms}, {"threads", m.bench.threads}};
  if (auto ok = plan_.front().validate(plan, "plan"); !ok) return fail(ok.error());
  return plan;
}

json Protocol::measure_request(const std::string& variant, const std::string& point, int trials) {
  return {{"kind", "measure"}, {"variant", variant}, {"point", point}, {"trials", trials}};
}

}  // namespace perfwatch::runner
