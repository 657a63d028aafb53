// The manifest's templates: bench.command and bench.env (command adapter),
// bench.google_benchmark.name. A template names the values of one variant at
// one point:
//
//   {name}     the point's axis of that name, or else the variant's param of
//              that name (a name that is both is an error: say which you mean
//              by renaming one)
//   {variant}  the variant's name
//   {{ }}      a literal brace
//   ${...}     left alone, so shell variables pass through to the shell
//
// Integers are written as integers, numbers in their shortest exact form,
// booleans as true / false, strings as they are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapters/protocol.h"
#include "common/result.h"

namespace perfwatch::adapters {

enum class Quoting {
  kNone,   // the value is used as it is (an environment variable, a benchmark name)
  kShell,  // the text goes to /bin/sh: a value with characters the shell would
           // split or interpret (space, quote, $, ;, ...) is an error
};

// Expands `text` for variant v at point p. Fails with where = `where` (the
// manifest field, e.g. "bench.command") on an unknown name, an ambiguous one,
// an unclosed brace, or a value the quoting rejects; the message names the
// variant and the point.
Result<std::string> expand(std::string_view text, const Variant& v, const Point& p, std::string_view where,
                           Quoting quoting = Quoting::kNone);

// The names a template uses, in order of first use ("variant" included).
// Fails like expand on a malformed template.
Result<std::vector<std::string>> placeholders(std::string_view text, std::string_view where);

// The params of `v` that none of the templates names: the program is not
// told about them (a variant line's ignored_params). Malformed templates
// count as naming nothing.
std::vector<std::string> unused_params(const Variant& v, const std::vector<std::string>& templates);

// A scalar as a template writes it: 48, 0.5, bf16, true.
std::string scalar_text(const nlohmann::json& value);

}  // namespace perfwatch::adapters
