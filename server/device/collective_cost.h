// The modeled time of HCCL's ring allreduce (the algorithm HCCL's guide
// describes: a ReduceScatter around the ring, then an AllGather, each n - 1
// steps in which every device sends one 1/n-th of the data to its neighbour):
//   T = 2 (n - 1) / n * bytes / link_bytes_per_s  +  2 (n - 1) * link_latency_s
// The reduction itself rides on the transfer (HCCL reduces in the DMA engine
// as the data arrives), so it adds no term. Presets carry the link figures
// (device_preset.h; sources in docs/device-model.md).
#pragma once

#include <cstdint>

#include "server/device/device_preset.h"

namespace npu::device {

// Seconds an allreduce of `bytes` (per device) over `devices` takes; 0 for one device.
double RingAllReduceSeconds(uint64_t bytes, int devices, const DevicePreset& preset);
// The same in the preset's cycles, rounded up.
uint64_t RingAllReduceCycles(uint64_t bytes, int devices, const DevicePreset& preset);

}  // namespace npu::device
