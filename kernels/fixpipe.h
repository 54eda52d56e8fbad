// FixPipe: L0C -> GM write-back of the Cube's fp32 accumulators, with the fused
// bias add (fp32), activation and cast that the Da Vinci FixPipe applies, and
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
  Epilogue epilogue = Epilogue::kNone;
  ElemType out_type = ElemType::kFloat32;
  bool saturate_fp16 = false;
};

// Writes n accumulators of one row of C, starting at column n0, to `out` (the
// element at column n0; fp32 or fp16 per cfg.out_type). Returns how many
// results overflowed: fp16 ones beyond the range (saturated or made +-inf) and
// any inf or NaN.
uint64_t FixPipeRow(const float* acc, int64_t n0, int64_t n, const FixPipeConfig& cfg, void* out);

// The same for one column `col` of C: `rows` accumulators acc[i * acc_stride],
// written contiguously to `out` (a channel of an NCHW output).
uint64_t FixPipeColumn(const float* acc, int64_t acc_stride, int64_t rows, int64_t col, const FixPipeConfig& cfg,
                       void* out);

// The activation alone, in fp32 (also the reference the tests use).
float ApplyEpilogue(float v, Epilogue e);

}  // namespace npu::kernels
