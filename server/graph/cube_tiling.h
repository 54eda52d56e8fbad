// Cube tiles derived from a core's buffers (DESIGN.md s.2) and chosen to fill
// the chip: A slices in L0A, B slices in L0B, the C tile's fp32 accumulators in
// L0C, panels in L1, each double-buffered; among the tiles that fit, the one a
// CANN-style tiler would pick for the problem (block dim = cores where the work
// allows: smaller m/n tiles, or K split over cores when even the smallest tiles
// leave cores idle).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cube_gemm.h"
#include "server/device/device_preset.h"
#include "server/device/tile_work.h"

namespace npu::graph {

// The largest square-ish tile that fits the preset's buffers.
kernels::CubeTileShape CubeTileForPreset(const device::DevicePreset& preset);

// The largest m or n a C tile takes.
inline constexpr int64_t kMaxCubeTileEdge = 256;

struct CubePlan {
  kernels::CubeTileShape tile;  // the kernel's tile: it computes (and counts) C tile by tile
  // K slices per C tile placed on separate cores, their fp32 partials summed
  // in GM. A scheduling decision of the model only: the kernel still sums K in
  // its fixed order, so results stay bitwise identical whatever the split.
  int64_t split_k = 1;
};

// The tiling of `batch` GEMMs of m x n x k (k as the Cube sees it, padded)
// with the shortest estimated time on the preset's cube cores.
CubePlan PlanCubeTiles(int64_t batch, int64_t m, int64_t n, int64_t k, const device::DevicePreset& preset);

// FAILED_PRECONDITION naming the buffer when a tile does not fit: a planning
// bug, never silently slower.
absl::Status CheckCubeTileFits(const kernels::CubeTileShape& tile, const device::DevicePreset& preset);

// Turns the kernel's per-tile counts (kernels::CountCubeTile, recorded by
// CubeGemm) of an m x n x k output tiled by `plan` into device tiles, with the
// drain of C the preset's cores use (device::DrainCubeTile). `a_panel_key` /
// `b_panel_key` name the batch's A and B within the op, so tiles reading the
// same A row panel or B column panel share it through the chip's L2.
void AppendCubeTiles(const std::vector<kernels::CubeTileCounts>& counts, int64_t m, int64_t n, int64_t k,
                     const CubePlan& plan, uint64_t a_panel_key, uint64_t b_panel_key,
                     const device::DevicePreset& preset, device::OpWork& work);

}  // namespace npu::graph
