// Turns the Cube GEMM's per-tile counts into the device model's TileWork.
#pragma once

#include <algorithm>
#include <vector>

#include "kernels/cube_gemm.h"
#include "npu/v1/tensor.pb.h"
#include "server/device/tile_work.h"

namespace npu::graph::ops {

inline void AppendCubeTiles(const std::vector<kernels::CubeTileCounts>& counts, device::OpWork& work) {
  for (const auto& c : counts) {
    device::TileWork w;
    w.cube_fractals = c.fractal_ops;
    w.mte2_bytes = c.mte2_bytes;
    w.mte1_bytes = c.mte1_bytes;
    w.fixpipe_bytes = c.fixpipe_bytes;
    w.scalar_instructions = 8 * c.k_steps;  // per k step: loop, addresses, sync flags
    w.pipeline_steps = std::max<uint64_t>(1, c.k_steps);
    work.tiles.push_back(w);
  }
}

inline kernels::ElemType CubeType(v1::DataType t) {
  return t == v1::FLOAT16 ? kernels::ElemType::kFloat16 : kernels::ElemType::kFloat32;
}

}  // namespace npu::graph::ops
