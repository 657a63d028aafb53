#include "adapters/protocol.h"

#include <set>

#include "common/text.h"

namespace perfwatch::adapters {

using nlohmann::json;

const Variant* Plan::variant(std::string_view name) const {
  for (const auto& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

const Point* Plan::point(std::string_view id) const {
  for (const auto& p : points)
    if (p.id == id) return &p;
  return nullptr;
}

const Metric* Plan::metric(std::string_view name) const {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

std::string Plan::metric_names() const {
  std::string out;
  for (const auto& m : metrics) out += (out.empty() ? "" : ", ") + m.name;
  return out;
}

namespace {

// Reads one line; false at end of input. A final line without its newline counts.
bool read_line(std::istream& in, std::string* line) {
  if (!std::getline(in, *line)) return false;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

Result<RequestReader> RequestReader::load() {
  RequestReader reader;
  for (const char* path : {"bench/v2/plan.schema.json", "bench/v2/measure.schema.json"}) {
    auto schema = schemas::Schema::load(path);
    if (!schema) return fail(schema.error());
    reader.schemas_.push_back(std::move(*schema));
  }
  return reader;
}

Result<Plan> parse_plan(const json& doc, const schemas::Schema& plan_schema) {
  if (doc.is_object() && doc.contains("schema_version") && doc["schema_version"] != 2)
    return fail(protocol_error("plan", "schema_version " + json_text(doc["schema_version"]) +
                                           ": perfwatch's adapters speak version 2 of the bench protocol"));
  if (auto ok = plan_schema.validate(doc, "plan"); !ok) return fail(protocol_error(ok.error().where, ok.error().message));

  Plan plan;
  std::set<std::string> seen;
  for (const auto& v : doc["variants"]) {
    Variant variant{v["name"].get<std::string>(), v["params"]};
    if (!seen.insert(variant.name).second)
      return fail(protocol_error("plan: variants", "variant '" + variant.name + "' appears twice"));
    plan.variants.push_back(std::move(variant));
  }
  seen.clear();
  for (const auto& p : doc["points"]) {
    Point point{p["id"].get<std::string>(), p["axes"]};
    if (!seen.insert(point.id).second)
      return fail(protocol_error("plan: points", "point '" + point.id + "' appears twice"));
    plan.points.push_back(std::move(point));
  }
  seen.clear();
  for (const auto& m : doc["metrics"]) {
    Metric metric{m["name"].get<std::string>(), m["unit"].get<std::string>(),
                  m["direction"].get<std::string>() == "higher_is_better"};
    if (!seen.insert(metric.name).second)
      return fail(protocol_error("plan: metrics", "metric '" + metric.name + "' is declared twice"));
    plan.metrics.push_back(std::move(metric));
  }
  plan.judged_metric = doc["judged_metric"].get<std::string>();
  if (plan.metric(plan.judged_metric) == nullptr)
    return fail(protocol_error("plan: judged_metric", "'" + plan.judged_metric +
                                                          "' is not one of the declared metrics (" +
                                                          plan.metric_names() + ")"));
  if (doc.contains("params")) plan.params = doc["params"];
  if (doc.contains("backend")) plan.backend = doc["backend"].get<std::string>();
  if (doc.contains("seed")) plan.seed = doc["seed"].get<std::uint64_t>();
  if (doc.contains("timing")) {
    const auto& t = doc["timing"];
    if (t.contains("min_trial_ms")) plan.min_trial_ms = t["min_trial_ms"].get<double>();
    if (t.contains("warmup_ms")) plan.warmup_ms = t["warmup_ms"].get<double>();
  }
  return plan;
}

Result<Plan> RequestReader::read_plan(std::istream& in) {
  std::string line;
  for (;;) {
    if (!read_line(in, &line)) return fail(protocol_error("plan", "stdin closed before the plan arrived"));
    if (!blank(line)) break;
  }
  json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return fail(protocol_error("plan", "the first line is not JSON"));
  return parse_plan(doc, schemas_[0]);
}

Result<std::optional<MeasureRequest>> RequestReader::next(std::istream& in, const Plan& plan) {
  std::string line;
  for (;;) {
    if (!read_line(in, &line)) return std::optional<MeasureRequest>{};
    if (!blank(line)) break;
  }
  const std::string where = "measure request " + std::to_string(++requests_);
  json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return fail(protocol_error(where, "not JSON"));
  if (auto ok = schemas_[1].validate(doc, where); !ok) return fail(protocol_error(ok.error().where, ok.error().message));
  MeasureRequest request{doc["variant"].get<std::string>(), doc["point"].get<std::string>(), doc["trials"].get<int>()};
  if (plan.variant(request.variant) == nullptr)
    return fail(protocol_error(where + ": variant", "'" + request.variant + "' is not a variant of the plan"));
  if (plan.point(request.point) == nullptr)
    return fail(protocol_error(where + ": point", "'" + request.point + "' is not a point of the plan"));
  return std::optional<MeasureRequest>(std::move(request));
}

void LineWriter::write(const json& line) {
  // Text from outside (a program's output, its stderr) may not be UTF-8:
  // replace what is not, rather than throw.
  out_ << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  out_.flush();
  if (line.value("kind", "") == "trial") ++trials_;
}

void LineWriter::error(std::string_view where, std::string_view message) {
  json line = {{"kind", "error"}, {"message", std::string(message)}};
  if (!where.empty()) line["where"] = std::string(where);
  write(line);
}

}  // namespace perfwatch::adapters
