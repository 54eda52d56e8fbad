// Element types of the Cube GEMM for graph dtypes. (Tile counts become device
// work through graph::AppendCubeTiles in cube_tiling.h, shared by every Cube op.)
#pragma once

#include "kernels/cube_gemm.h"
#include "npu/v1/tensor.pb.h"

namespace npu::graph::ops {

inline kernels::ElemType CubeType(v1::DataType t) {
  return t == v1::FLOAT16 ? kernels::ElemType::kFloat16 : kernels::ElemType::kFloat32;
}

}  // namespace npu::graph::ops
