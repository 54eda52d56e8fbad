// The cost model: every formula that turns counted work into modeled cycles
// lives here (docs/device-model.md explains them, with sources).
#pragma once

#include <cstdint>

#include "server/device/device_preset.h"
#include "server/device/tile_work.h"
#include "server/device/unit_cycles.h"

namespace npu::device {

// Bumped whenever a formula or constant below changes; reported in every profile.
inline constexpr const char* kCostModelVersion = "davinci-cost-model/1";

// Issue overhead of one Vector instruction, cycles (decode + operand setup).
inline constexpr uint64_t kVectorIssueCycles = 2;
// Scalar work per tile (block setup, loop bounds, synchronisation flags), cycles.
inline constexpr uint64_t kScalarCyclesPerTile = 64;

struct TileCost {
  UnitCycles busy;
  uint64_t duration = 0;  // cycles the tile occupies its core
};

// `active_cores` is how many cores of the chip pull from HBM at the same time
// (the op's block_dim): they share its bandwidth.
TileCost CostTile(const TileWork& w, const DevicePreset& preset, int active_cores);

}  // namespace npu::device
