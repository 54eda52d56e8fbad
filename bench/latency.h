// Timing helpers the service benches share: medians of sequential calls.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace npu::bench {

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// p50 of `n` sequential calls, microseconds; -1 when a call fails.
template <typename Call>
double P50Us(int n, Call call) {
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!call()) return -1;
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return Median(us);
}

}  // namespace npu::bench
