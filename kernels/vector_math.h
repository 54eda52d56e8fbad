// Vector unit math on contiguous fp32 (or int32) operands: the computation of
// one UB-resident chunk. fp16 tensors are widened before and rounded once after.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npu::kernels {

enum class BinaryOp { kAdd, kSub, kMul, kDiv };
enum class UnaryOp { kRelu };

void BinaryF32(BinaryOp op, const float* a, const float* b, float* out, size_t n);
// Wrapping two's-complement arithmetic; division by zero gives 0.
void BinaryI32(BinaryOp op, const int32_t* a, const int32_t* b, int32_t* out, size_t n);
void UnaryF32(UnaryOp op, const float* in, float* out, size_t n);

}  // namespace npu::kernels
