// Small pieces the text printers share: numbers, percentages, p-values,
// dates and column padding, as a kernel engineer reads them in a terminal.
#pragma once

#include <optional>
#include <string>

#include "store/ids.h"

namespace perfwatch::views::text {

// "+12.3%"
std::string signed_percent(double rel, int decimals = 1);
// "+-5.0%": a band's half-width.
std::string band(double rel);
// A value with the digits that matter ("40.75", "1234", "0.01234"); "-" when absent.
std::string number(std::optional<double> v);
// "0.0012", "<0.0001"; "-" when absent.
std::string p_value(std::optional<double> p);
// "2026-11-29 10:00" (UTC)
std::string date(store::UnixSeconds t);
// `s` padded on the right (pad) or left (lpad) to `width`; one space after
// a value that fills the width.
std::string pad(const std::string& s, std::size_t width);
std::string lpad(const std::string& s, std::size_t width);

}  // namespace perfwatch::views::text
