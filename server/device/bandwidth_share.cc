#include "server/device/bandwidth_share.h"

#include <algorithm>
#include <limits>

namespace npu::device {

std::vector<double> MaxMinShare(const std::vector<BandwidthDemand>& demands, double hbm_capacity,
                                double l2_capacity) {
  // Progressive filling: raise one common level for every unfrozen demand
  // until a demand reaches its cap (it stops there) or a resource fills up
  // (every demand using it stops at the level reached).
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kEps = 1e-12;
  const size_t n = demands.size();
  std::vector<double> grant(n, 0.0);
  std::vector<bool> frozen(n, false);
  double hbm_left = std::max(0.0, hbm_capacity), l2_left = std::max(0.0, l2_capacity);
  double level = 0;
  for (size_t unfrozen = n; unfrozen > 0;) {
    const size_t before = unfrozen;
    double hbm_weight = 0, l2_weight = 0, to_cap = kInf;
    for (size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      hbm_weight += demands[i].hbm_fraction;
      l2_weight += 1.0 - demands[i].hbm_fraction;
      to_cap = std::min(to_cap, demands[i].cap - level);
    }
    const double to_hbm = hbm_weight > kEps ? hbm_left / hbm_weight : kInf;
    const double to_l2 = l2_weight > kEps ? l2_left / l2_weight : kInf;
    const double step = std::max(0.0, std::min({to_cap, to_hbm, to_l2}));
    level += step;
    hbm_left = std::max(0.0, hbm_left - step * hbm_weight);
    l2_left = std::max(0.0, l2_left - step * l2_weight);
    const bool hbm_full = to_hbm <= step + kEps, l2_full = to_l2 <= step + kEps;
    for (size_t i = 0; i < n; ++i) {
      if (frozen[i]) continue;
      const BandwidthDemand& d = demands[i];
      const bool stops = d.cap - level <= kEps * std::max(1.0, d.cap) || (hbm_full && d.hbm_fraction > 0) ||
                         (l2_full && d.hbm_fraction < 1.0);
      if (!stops) continue;
      grant[i] = std::min(level, d.cap);
      frozen[i] = true;
      --unfrozen;
    }
    if (unfrozen == before) {  // rounding left nothing to stop: the level is final
      for (size_t i = 0; i < n; ++i) {
        if (!frozen[i]) grant[i] = std::min(level, demands[i].cap);
      }
      break;
    }
  }
  return grant;
}

}  // namespace npu::device
