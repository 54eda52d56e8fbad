// Cube tile shapes derived from a core's buffers (DESIGN.md s.2): A slices in
// L0A, B slices in L0B, the C tile's fp32 accumulators in L0C, panels in L1,
// each double-buffered.
#pragma once

#include "absl/status/statusor.h"
#include "kernels/cube_gemm.h"
#include "server/device/device_preset.h"

namespace npu::graph {

// The largest square-ish tile that fits the preset's buffers.
kernels::CubeTileShape CubeTileForPreset(const device::DevicePreset& preset);

// FAILED_PRECONDITION naming the buffer when a tile does not fit: a planning
// bug, never silently slower.
absl::Status CheckCubeTileFits(const kernels::CubeTileShape& tile, const device::DevicePreset& preset);

}  // namespace npu::graph
