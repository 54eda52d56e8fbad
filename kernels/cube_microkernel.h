// The Cube on the host: one register-blocked multiply-accumulate over a k slice.
//
// Operands are as MTE1 packed them (cube_pack.h): an A sliver of `mr` rows, fp32
// values of fp16-rounded inputs, k-major (a[k * mr + r]); `np` B fractal columns,
// each 16 halves wide and k-major (b[p * b_panel_stride + k * 16 + c]). The block
// of C is mr x (16 * np) fp32 accumulators (L0C) with row stride ldc.
//
// Every accumulator runs k = 0..kc-1 as one fused multiply-add per step, starting
// from zero or (accumulate) from what c holds. Nothing else touches the sum, so all
// variants and all SIMD paths agree bit for bit.
#pragma once

#include <cstdint>

#include "kernels/fp16.h"

namespace npu::kernels {

using CubeMicroKernelFn = void (*)(int64_t kc, const float* a, const half_bits* b, int64_t b_panel_stride,
                                   float* c, int64_t ldc, bool accumulate);

inline constexpr int kCubeMaxMr = 16;
inline constexpr int kCubeMaxNp = 2;

// One variant per (rows, fractal columns), so M and N tails need no padding work.
struct CubeMicroKernelSet {
  int mr = 0;  // rows of a full sliver
  int np = 0;  // fractal columns of a full block
  CubeMicroKernelFn fn[kCubeMaxMr][kCubeMaxNp] = {};  // fn[rows - 1][cols - 1]
};

// Defined in cube_microkernel_{avx512,avx2,portable}.cc; the SIMD sets are only
// usable where HostCpuFeatures() says so.
extern const CubeMicroKernelSet kAvx512CubeKernels;
extern const CubeMicroKernelSet kAvx2CubeKernels;
extern const CubeMicroKernelSet kPortableCubeKernels;

}  // namespace npu::kernels
