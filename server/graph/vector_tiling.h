// How a Vector op is split: block_dim tiles of contiguous output elements, each
// processed in UB-sized, double-buffered chunks.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

#include "server/device/device_preset.h"
#include "server/device/tile_work.h"

namespace npu::graph {

struct VectorTiling {
  int64_t tiles = 0;           // block_dim
  int64_t per_tile = 0;        // output elements per tile (the last may be shorter)
  int64_t chunk = 0;           // output elements per UB chunk
  uint64_t ub_bytes = 0;       // UB the chunk needs, double-buffered
  int64_t TileBegin(int64_t t) const { return t * per_tile; }
};

// `ub_bytes_per_element`: UB bytes one output element needs across all its
// operands (inputs + output + scratch), before double buffering.
VectorTiling PlanVectorTiles(int64_t elements, int64_t ub_bytes_per_element, const device::DevicePreset& preset);

// FAILED_PRECONDITION naming UB when the tiling's chunk does not fit the
// preset's UB (an op whose operands need more than UB / 256 bytes per element):
// a planning bug, never silently slower. The Cube's twin is CheckCubeTileFits.
absl::Status CheckVectorTilingFits(const VectorTiling& tiling, const device::DevicePreset& preset);

// The counted work of one chunk: `in_bytes` read from GM, `out_bytes` written,
// `lane_bytes` the width one element occupies in the Vector unit, `passes` the
// instructions over the chunk (one per arithmetic step).
// `passes` per op: device::VectorPasses (server/device/vector_passes.h).
device::TileWork VectorChunkWork(int64_t elements, int64_t in_bytes, int64_t out_bytes, int64_t lane_bytes,
                                 int64_t passes);

// The work of a whole elementwise op over `elements` outputs, as the ops
// build it chunk by chunk: `in_elem_bytes` summed over the inputs, `operands`
// the UB slots per element (inputs + output). Lets the model (and its tests)
// price shapes without computing them.
device::OpWork ElementwiseOpWork(int64_t elements, int64_t in_elem_bytes, int64_t out_elem_bytes, int64_t lane_bytes,
                                 int64_t operands, int64_t passes, const device::DevicePreset& preset);

}  // namespace npu::graph
