#include "analysis/device_offsets.h"

#include <cmath>
#include <map>

#include "analysis/significance.h"

namespace perfwatch::analysis {

namespace {

bool usable(double v) { return std::isfinite(v) && v > 0; }

double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return x.empty() ? 0 : s / static_cast<double>(x.size());
}

}  // namespace

std::vector<DeviceOffset> device_offsets(const std::vector<DeviceRun>& runs, double alpha) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> by_device;
  std::size_t cells = 0;
  for (const auto& r : runs) {
    if (!by_device.count(r.device)) order.push_back(r.device);
    by_device[r.device];
    cells = std::max(cells, r.values.size());
  }
  if (order.size() < 2) return {};

  // The mean log value of each cell over every run that has it.
  std::vector<double> cell_mean(cells, 0);
  std::vector<int> cell_n(cells, 0);
  for (const auto& r : runs)
    for (std::size_t c = 0; c < r.values.size(); ++c)
      if (usable(r.values[c])) cell_mean[c] += std::log(r.values[c]), ++cell_n[c];
  for (std::size_t c = 0; c < cells; ++c)
    if (cell_n[c]) cell_mean[c] /= cell_n[c];

  // Each run's offset: its mean log residual over the cells it measured.
  for (const auto& r : runs) {
    double s = 0;
    int n = 0;
    for (std::size_t c = 0; c < r.values.size(); ++c)
      if (usable(r.values[c])) s += std::log(r.values[c]) - cell_mean[c], ++n;
    if (n) by_device[r.device].push_back(s / n);
  }

  // Run-to-run spread on one GPU: the pooled SD of offsets within devices.
  double ss = 0;
  int df = 0;
  for (const auto& [device, offsets] : by_device) {
    const double m = mean(offsets);
    for (double o : offsets) ss += (o - m) * (o - m);
    df += static_cast<int>(offsets.size()) - 1;
  }
  const double within_sd = df > 0 ? std::sqrt(ss / df) : 0;

  std::vector<DeviceOffset> out;
  for (const auto& device : order) {
    const auto& mine = by_device[device];
    std::vector<double> rest;
    for (const auto& [other, offsets] : by_device)
      if (other != device) rest.insert(rest.end(), offsets.begin(), offsets.end());
    DeviceOffset d;
    d.device = device;
    d.runs = static_cast<int>(mine.size());
    if (mine.empty() || rest.empty()) {
      out.push_back(d);
      continue;
    }
    const double shift = mean(mine) - mean(rest);
    d.offset_rel = std::expm1(shift);
    if (mine.size() >= 2 && rest.size() >= 2) {
      d.p_value = welch_t_test(rest, mine).p_value;
      d.off = order.size() >= 3 && d.p_value < alpha / static_cast<double>(order.size()) &&
              std::abs(shift) > within_sd;
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace perfwatch::analysis
