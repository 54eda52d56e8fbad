// Integer arithmetic of INT64 tensors (the shape arithmetic torch exports:
// Shape -> Gather -> Add/Mul/Div -> Concat) on contiguous int64 operands, and
// the comparisons every dtype shares, writing BOOL bytes. fp16/fp32 stay the
// Cube/Vector compute types; these run on the Vector unit's integer lanes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/vector_math.h"

namespace npu::kernels {

// ONNX integer semantics: two's-complement wrapping; Div truncates toward zero
// (INT64_MIN / -1 wraps to INT64_MIN); division by zero gives 0 (ONNX leaves
// it undefined; torch raises); Pow with a negative exponent gives 0 unless the
// base is +-1. Comparisons give 1 / 0. kFmod is C's % (x's sign), kMod
// Python's (y's sign); both give 0 for a zero divisor.
void BinaryI64(BinaryOp op, const int64_t* a, const int64_t* b, int64_t* out, size_t n);

enum class CompareOp { kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual };

// out[i] = a[i] OP b[i] ? 1 : 0. For float, any comparison with NaN is false
// (Equal too), as IEEE and ONNX say.
void Compare(CompareOp op, const float* a, const float* b, uint8_t* out, size_t n);
void Compare(CompareOp op, const int64_t* a, const int64_t* b, uint8_t* out, size_t n);

}  // namespace npu::kernels
