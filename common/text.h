// Text from outside perfwatch -- git, a manifest, a bench, an HTTP request --
// may be any bytes: not UTF-8 (a Latin-1 commit subject), or full of terminal
// control sequences. These make such text safe to store, to serialise as JSON
// and to print, without losing what can be read of it.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfwatch {

// True when `bytes` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool is_valid_utf8(std::string_view bytes);

// `bytes` with every ill-formed sequence replaced by U+FFFD, one per maximal
// ill-formed subpart (the Unicode Standard's recommended practice, as
// browsers do): "Ren\xE9" -> "Ren\uFFFD". Valid UTF-8 comes back unchanged.
std::string valid_utf8(std::string_view bytes);

// For a terminal: valid_utf8, then every control character other than
// newline and tab (C0, DEL, and the C1 range U+0080..U+009F, which some
// terminals obey as escape sequences) written as a visible escape: ESC as
// "\x1b", U+009B as "\u009b". A subject cannot move the cursor, clear the
// screen or set the window title.
std::string terminal_safe(std::string_view text);

// JSON text of `doc` that never throws on a string that is not UTF-8
// (nlohmann's dump() does, type_error 316): such bytes become U+FFFD.
// indent < 0: one line; otherwise pretty-printed with that many spaces.
std::string json_text(const nlohmann::json& doc, int indent = -1);

}  // namespace perfwatch
