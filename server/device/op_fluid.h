// Places the tiles of one op on cores with the chip's memory bandwidth shared
// as a fluid: at every moment the running tiles divide what the ops already
// scheduled leave of HBM and L2 (memory_timeline.h) max-min fairly
// (bandwidth_share.h), each no faster than its own pace and its core's
// per-core GM and L2 rates. A tile that gets less than its pace is stretched.
// Between two events (a tile starts or ends, the earlier usage changes) the
// rates are constant, so the result is exact for the fluid model: no windows,
// no first-come advantage.
#pragma once

#include <cstdint>
#include <vector>

#include "server/device/memory_timeline.h"

namespace npu::device {

struct FluidTile {
  uint64_t duration = 1;  // cycles alone on its core, memory unhindered (>= 1)
  double hbm_bytes = 0;   // GM traffic that reaches HBM
  double l2_bytes = 0;    // GM traffic the L2 serves
};

struct CoreMemoryRates {
  double hbm_bytes_per_cycle = 0;  // one core's most HBM traffic per cycle (CANN's ddr_rate)
  double l2_bytes_per_cycle = 0;   // one core's most L2 traffic per cycle (CANN's l2_rate)
};

struct FluidPlacement {
  int core = 0;
  uint64_t start = 0, end = 0;  // cycles; end >= start + duration
};

// Places `tiles` in order, none before `not_before`, each on an eligible core
// as soon as one is free: of the cores free then, the one freed last (ties to
// the lowest index), so cores long idle stay free for other work. `free_at` holds every core's
// free cycle and is advanced for the cores used. The op's own usage is added
// to `timeline`.
std::vector<FluidPlacement> PlaceFluid(const std::vector<FluidTile>& tiles, const std::vector<int>& eligible,
                                       std::vector<uint64_t>& free_at, uint64_t not_before,
                                       const CoreMemoryRates& rates, MemoryTimeline& timeline);

}  // namespace npu::device
