// How a Vector op is split: block_dim tiles of contiguous output elements, each
// processed in UB-sized, double-buffered chunks.
#pragma once

#include <cstdint>

#include "server/device/device_preset.h"
#include "server/device/tile_work.h"

namespace npu::graph {

struct VectorTiling {
  int64_t tiles = 0;           // block_dim
  int64_t per_tile = 0;        // output elements per tile (the last may be shorter)
  int64_t chunk = 0;           // output elements per UB chunk
  int64_t TileBegin(int64_t t) const { return t * per_tile; }
};

// `ub_bytes_per_element`: UB bytes one output element needs across all its
// operands (inputs + output + scratch), before double buffering.
VectorTiling PlanVectorTiles(int64_t elements, int64_t ub_bytes_per_element, const device::DevicePreset& preset);

// The counted work of one chunk: `in_bytes` read from GM, `out_bytes` written,
// `lane_bytes` the width one element occupies in the Vector unit, `passes` the
// instructions over the chunk (one per arithmetic step).
device::TileWork VectorChunkWork(int64_t elements, int64_t in_bytes, int64_t out_bytes, int64_t lane_bytes,
                                 int64_t passes);

}  // namespace npu::graph
