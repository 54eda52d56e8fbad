// FixPipe: L0C -> GM write-back of the Cube's fp32 accumulators, with the fused
// bias add (fp32), epilogue and cast that the Da Vinci FixPipe applies, and
// the count of results that overflowed (what raises the float-status flag).
//
// One implementation for every SIMD path: the epilogue (erf, tanh) is not a
// single rounding, so it must be the same code everywhere to keep results
// bitwise identical.
#pragma once

#include <cstdint>

#include "kernels/cube_gemm.h"

namespace npu::kernels {

struct FixPipeConfig {
  const float* bias = nullptr;  // indexed by the output column; may be null
  const CubeEpilogue* epilogue = nullptr;
  ElemType out_type = ElemType::kFloat32;
  bool saturate_fp16 = false;
  int64_t batch = 0;  // the GEMM batch the results belong to (the epilogue's operands)
};

// Writes n accumulators of one row of C, starting at column n0, to `out` (the
// element at column n0, `offset` elements into the batch's C; fp32 or fp16 per
// cfg.out_type). Returns how many results overflowed: fp16 ones beyond the
// range (saturated or made +-inf) and any inf or NaN.
uint64_t FixPipeRow(const float* acc, int64_t n0, int64_t n, int64_t offset, const FixPipeConfig& cfg, void* out);

// The same for one column `col` of C: `rows` accumulators acc[i * acc_stride],
// written contiguously to `out` (a channel of an NCHW output, `offset`
// elements into the batch's C).
uint64_t FixPipeColumn(const float* acc, int64_t acc_stride, int64_t rows, int64_t col, int64_t offset,
                       const FixPipeConfig& cfg, void* out);

// FixPipeColumn for `cols` neighbouring columns col0.. of C at once: column j
// goes to `out` + j * out_stride elements (`offset` + j * out_stride into the
// batch's C). The accumulators are read row by row in blocks, not column by
// column down the tile, which is what makes channel-major write-back cheap.
uint64_t FixPipeColumns(const float* acc, int64_t acc_stride, int64_t rows, int64_t col0, int64_t cols,
                        int64_t offset, int64_t out_stride, const FixPipeConfig& cfg, void* out);

}  // namespace npu::kernels
