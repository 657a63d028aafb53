#include "cli/command_typo.h"

#include <algorithm>

namespace perfwatch::cli {

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The option `name` ("--db", "-n") of `app` or, as CLI11's fallthrough
// lets it, of an app above it.
const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
  for (; app; app = app->get_parent()) {
    if (const CLI::Option* o = app->get_option_no_throw(name)) return o;
  }
  return nullptr;
}

}  // namespace

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = word.size() / 2 + 1;
  for (const auto& c : candidates) {
    // A prefix ("exp" for "experiment") is as good as a near miss.
    const std::size_t d = c.rfind(word, 0) == 0 && word.size() >= 2 ? 1 : edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::optional<std::string> mistyped_command(const CLI::App& root, const std::vector<std::string>& args) {
  const CLI::App* app = &root;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") return std::nullopt;
    if (word == "-h" || word == "--help" || word == "--version") return std::nullopt;  // CLI11 answers these
    if (word.size() > 1 && word[0] == '-') {
      if (word.find('=') != std::string::npos) continue;
      const CLI::Option* o = find_option(app, word);
      // An option no app knows is CLI11's to report: where its value ends is not known.
      if (!o) return std::nullopt;
      // Its value is the next word when it takes one (a flag's type has a
      // size too, but it expects no value: get_expected_*, not get_type_size_*).
      if (o->get_expected_min() > 0 || (o->get_expected_max() > 0 && i + 1 < args.size() && !args[i + 1].starts_with("-")))
        ++i;
      continue;
    }
    auto subs = app->get_subcommands([](const CLI::App*) { return true; });
    auto named = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->check_name(word); });
    if (named != subs.end()) {
      app = *named;
      continue;
    }
    // A word where the app takes positionals is a value, not a command.
    if (subs.empty() || !app->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty())
      return std::nullopt;
    std::vector<std::string> names;
    for (const CLI::App* s : subs) names.push_back(s->get_name());
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    const std::string where = app == &root ? "" : " of '" + app->get_name() + "'";
    const std::string guess = nearest(word, names);
    return "unknown command '" + word + "'" + where + ": " + (guess.empty() ? "" : "did you mean '" + guess + "'? ") +
           "(commands: " + list + "; --help says more)";
  }
  // No command where one is required: say which there are.
  if (app->get_require_subcommand_min() > 0) {
    std::string list;
    for (const CLI::App* s : app->get_subcommands([](const CLI::App*) { return true; }))
      list += (list.empty() ? "" : ", ") + s->get_name();
    const std::string where = app == &root ? "" : " after '" + app->get_name() + "'";
    return "a command is needed" + where + ": one of " + list + " (--help says more)";
  }
  return std::nullopt;
}

}  // namespace perfwatch::cli
