#include "schemas/schema.h"

#include <algorithm>
#include <map>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace perfwatch::embedded {
std::optional<std::string_view> schema_files(std::string_view path);
std::vector<std::string_view> schema_files_paths();
}  // namespace perfwatch::embedded

namespace perfwatch::schemas {

std::optional<std::string_view> file(std::string_view path) { return embedded::schema_files(path); }

std::vector<std::string> paths() {
  std::vector<std::string> out;
  for (auto p : embedded::schema_files_paths()) out.emplace_back(p);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// "a/b/../c.json" -> "a/c.json"
std::string normalise(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

// valijson reports a context like ["<root>", "[sweep]", "[batch]", "[2]"];
// users read "sweep.batch[2]".
std::string json_path(const std::vector<std::string>& context) {
  std::string out;
  for (const auto& c : context) {
    if (c == "<root>") continue;
    std::string inner = c;
    if (inner.size() >= 2 && inner.front() == '[' && inner.back() == ']') inner = inner.substr(1, inner.size() - 2);
    bool index = !inner.empty() && std::all_of(inner.begin(), inner.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (index) {
      out += "[" + inner + "]";
    } else {
      if (!out.empty()) out += ".";
      out += inner;
    }
  }
  return out;
}

}  // namespace

struct Schema::Impl {
  std::string path;
  nlohmann::json document;
  valijson::Schema compiled;
};

Schema::Schema(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Schema::Schema(Schema&&) noexcept = default;
Schema& Schema::operator=(Schema&&) noexcept = default;
Schema::~Schema() = default;

const std::string& Schema::path() const { return impl_->path; }

Result<Schema> Schema::load(std::string_view path) {
  auto impl = std::make_unique<Impl>();
  impl->path = std::string(path);
  auto text = file(path);
  if (!text) return fail(not_found("schemas/" + impl->path, "no such schema is compiled in"));
  impl->document = nlohmann::json::parse(*text, nullptr, false);
  if (impl->document.is_discarded()) return fail(invalid_argument("schemas/" + impl->path, "not valid JSON"));

  // Referenced documents live as long as the parse; the compiled schema copies what it needs.
  std::map<std::string, std::unique_ptr<nlohmann::json>> fetched;
  std::string base = directory_of(impl->path);
  auto fetch = [&](const std::string& uri) -> const nlohmann::json* {
    std::string target = normalise(base + uri);
    auto doc_text = file(target);
    if (!doc_text) return nullptr;
    auto doc = std::make_unique<nlohmann::json>(nlohmann::json::parse(*doc_text, nullptr, false));
    if (doc->is_discarded()) return nullptr;
    const nlohmann::json* raw = doc.get();
    fetched[target] = std::move(doc);
    return raw;
  };
  auto release = [](const nlohmann::json*) {};

  try {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(impl->document);
    parser.populateSchema(adapter, impl->compiled, fetch, release);
  } catch (const std::exception& e) {
    return fail(invalid_argument("schemas/" + impl->path, std::string("not a usable schema: ") + e.what()));
  }
  return Schema(std::move(impl));
}

Status Schema::validate(const nlohmann::json& doc, std::string_view where) const {
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  if (validator.validate(impl_->compiled, target, &results)) return {};

  // valijson reports the outermost failure first ("failed to validate against
  // schema associated with property"); the innermost one says what is wrong.
  valijson::ValidationResults::Error deepest;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    if (e.context.size() > deepest.context.size()) deepest = e;
  }
  std::string field = json_path(deepest.context);
  std::string location = std::string(where);
  if (!field.empty()) location += (location.empty() ? "" : ": ") + field;
  return fail(invalid_argument(location, deepest.description));
}

}  // namespace perfwatch::schemas
