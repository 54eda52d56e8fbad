#include "server/device/collective_cost.h"

#include <cmath>

namespace npu::device {

double RingAllReduceSeconds(uint64_t bytes, int devices, const DevicePreset& preset) {
  if (devices <= 1) return 0.0;
  const double n = devices;
  return 2.0 * (n - 1.0) / n * static_cast<double>(bytes) / preset.link_bytes_per_s +
         2.0 * (n - 1.0) * preset.link_latency_s;
}

uint64_t RingAllReduceCycles(uint64_t bytes, int devices, const DevicePreset& preset) {
  return static_cast<uint64_t>(std::ceil(RingAllReduceSeconds(bytes, devices, preset) * preset.clock_hz));
}

}  // namespace npu::device
