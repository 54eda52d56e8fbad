// MTE1: lays a tile's operands out the way the Cube reads them, rounding fp32
// inputs to fp16 on the way (as an NPU does), in the run's float mode
// (`saturate`: cube_operand_rounding.h).
//
// B goes into 16-column fractal panels of fp16: panel p holds columns
// [16p, 16p + 16) of the tile for a range of k, k-major (16 halves per k), i.e. a column
// of 16x16 fractals; columns past the tile edge are zero.
// A goes into slivers of `mr` rows (the last one may be shorter), each k-major
// (a[k * rows + r]). A holds fp32 copies of the fp16 values because the Cube
// broadcasts every A element to a whole vector: widening once here costs one
// conversion per element instead of one per element per 16 columns of C.
#pragma once

#include <cstdint>

#include "kernels/cube_gemm.h"

namespace npu::kernels {

// One GEMM operand in global memory: element (row, col) of op(X) is at
// base[trans ? col * ld + row : row * ld + col].
inline constexpr int64_t kCubePackASlack = 16;

struct OperandView {
  const void* base = nullptr;
  ElemType type = ElemType::kFloat16;
  int64_t ld = 0;
  bool trans = false;
};

// How many values of op(X) (rows x cols, in each of `batches` batches
// `batch_stride` elements apart) are beyond fp16's range or not finite
// (CountHalfOverflow): what saturation mode hides. 0 for fp16 operands, which
// the Cube reads as they are.
uint64_t CountSaturatedOperands(const OperandView& x, int64_t rows, int64_t cols, int64_t batches,
                                int64_t batch_stride);

// Height of the A sliver that starts at tile row s0: mr, except that a short
// remainder (< mr / 2 rows) is merged with the sliver before it and the two are
// split evenly, so no micro-kernel runs with 1-2 rows (too few independent FMA
// chains to cover the FMA latency).
int64_t CubeSliverRows(int64_t mt, int mr, int64_t s0);

// Rows [m0, m0 + mt) of op(A), all k columns, into slivers (CubeSliverRows):
// the sliver starting at row s0 starts at out + s0 * k. out holds mt * k + kCubePackASlack floats
// (the SIMD packer writes whole vectors past the end).
void PackCubeA(const OperandView& a, int64_t m0, int64_t mt, int64_t k, int mr, bool saturate, float* out);

// Columns [n0, n0 + nt) of op(B), rows [k0, k0 + kc), into ceil(nt / 16) panels
// of kc * 16 halves each, panel p at out + p * panel_stride.
void PackCubeB(const OperandView& b, int64_t n0, int64_t nt, int64_t k0, int64_t kc, int64_t panel_stride,
               bool saturate, half_bits* out);

}  // namespace npu::kernels
