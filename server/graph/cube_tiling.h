// Cube tile shapes derived from a core's buffers (DESIGN.md s.2): A slices in
// L0A, B slices in L0B, the C tile's fp32 accumulators in L0C, panels in L1,
// each double-buffered.
#pragma once

#include "absl/status/statusor.h"
#include "kernels/cube_gemm.h"
#include "server/device/device_preset.h"
#include "server/device/tile_work.h"

namespace npu::graph {

// The largest square-ish tile that fits the preset's buffers.
kernels::CubeTileShape CubeTileForPreset(const device::DevicePreset& preset);

// FAILED_PRECONDITION naming the buffer when a tile does not fit: a planning
// bug, never silently slower.
absl::Status CheckCubeTileFits(const kernels::CubeTileShape& tile, const device::DevicePreset& preset);

// Turns the kernel's per-tile counts (kernels::CountCubeTile, recorded by
// CubeGemm) of an m x n output tiled by `tile` into device tiles.
// `a_panel_key` / `b_panel_key` name the batch's A and B within the op, so
// tiles reading the same A row panel or B column panel share it through the
// chip's L2.
void AppendCubeTiles(const std::vector<kernels::CubeTileCounts>& counts, int64_t m, int64_t n,
                     const kernels::CubeTileShape& tile, uint64_t a_panel_key, uint64_t b_panel_key,
                     device::OpWork& work);

}  // namespace npu::graph
