#include "views/text_format.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace perfwatch::views::text {

std::string signed_percent(double rel, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.*f%%", decimals, 100 * rel);
  return buf;
}

std::string band(double rel) { return "+-" + signed_percent(rel).substr(1); }

std::string number(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[32];
  double a = std::fabs(*v);
  std::snprintf(buf, sizeof buf, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 1 ? "%.2f" : "%.4g", *v);
  return buf;
}

std::string p_value(std::optional<double> p) {
  if (!p) return "-";
  if (*p < 0.0001) return "<0.0001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", *p);
  return buf;
}

std::string date(store::UnixSeconds t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }
std::string lpad(const std::string& s, std::size_t w) { return s.size() >= w ? " " + s : std::string(w - s.size(), ' ') + s; }

}  // namespace perfwatch::views::text
