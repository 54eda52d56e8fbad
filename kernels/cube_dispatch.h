// Which micro-kernel set runs the Cube: chosen at run time from the CPU's
// features, or forced for tests and benchmarks (ForceCubeSimdPath, cube_gemm.h).
#pragma once

#include "kernels/cube_gemm.h"
#include "kernels/cube_microkernel.h"

namespace npu::kernels {

// The set for ActiveCubeSimdPath().
const CubeMicroKernelSet& ActiveCubeKernels();

}  // namespace npu::kernels
