// The cost model: every formula that turns counted work into modeled cycles
// lives here and in core_pool.cc / op_fluid.cc (chip-level HBM and L2); docs/device-model.md
// explains them with their sources. Cycles are modeled, never measured.
//
// Per tile, per unit (busy cycles):
//   cube    = 16x16x16 fp16 fractal MACs issued (one per cycle)
//   vector  = 256-byte repeats (x passes, see vector_passes.h)
//             + kVectorIssueCycles per instruction (<= 255 repeats each)
//             + L0C -> UB bytes / l0c_to_ub rate (coupled cores drain the Cube)
//   scalar  = kScalarCyclesPerTile + scalar instructions counted by the op
//   mte1    = L0A bytes / mte1_a rate + L0B bytes / mte1_b rate
//   mte2    = HBM bytes read / gm rate + L2 hits / l2 rate (per-core GM rates)
//   mte3    = bytes / mte3 rate;   fixpipe = bytes / fixpipe rate
// Double buffering overlaps the units, so a tile lasts
//   duration = block_start_cycles + max(unit busy) + fill + drain
//   fill  = mte2 / pipeline_steps            (the first load, nothing to overlap)
//   drain = (fixpipe + mte3) / pipeline_steps (the last store)
// The chip then shares its HBM and L2 bandwidth fairly among the tiles running
// together, which may stretch them (core_pool.cc, op_fluid.h).
#pragma once

#include <cstdint>

#include "server/device/device_preset.h"
#include "server/device/tile_work.h"
#include "server/device/unit_cycles.h"

namespace npu::device {

// Bumped whenever a formula or constant changes; reported in every profile.
inline constexpr const char* kCostModelVersion = "davinci-cost-model/4";

// Issue overhead of one Vector instruction, cycles (decode + operand setup).
// Not published; an assumption small next to a full 255-repeat instruction.
inline constexpr uint64_t kVectorIssueCycles = 2;
// Scalar work per tile (block setup, loop bounds, synchronisation flags), cycles.
inline constexpr uint64_t kScalarCyclesPerTile = 64;

struct TileCost {
  UnitCycles busy;
  uint64_t duration = 0;  // cycles the tile occupies its core, before HBM contention
};

// The tile alone on its core, its engines at full width; `l2_read_bytes` of
// its MTE2 reads are served by the L2, the rest come from HBM.
TileCost CostTile(const TileWork& w, const DevicePreset& preset, uint64_t l2_read_bytes = 0);

// After HBM contention stretched a tile from `cost.duration` to `duration`
// cycles: its transfer engines (MTE2, MTE3, FixPipe) were busy waiting for
// memory, so their busy cycles grow in proportion, never past `duration`.
UnitCycles StretchTransfers(const TileCost& cost, uint64_t duration);

}  // namespace npu::device
