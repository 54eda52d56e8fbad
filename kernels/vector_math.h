// Vector unit math on contiguous fp32 (or int32) operands: the computation of
// one UB-resident chunk. fp16 tensors are widened before and rounded once after,
// so every function here works in fp32 (DESIGN.md numerics contract).
#pragma once

#include <cstddef>
#include <cstdint>

namespace npu::kernels {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kEqual, kLess, kGreater };
// Comparisons produce 1.0f / 0.0f (the caller stores them as BOOL).
bool IsComparison(BinaryOp op);

enum class UnaryOp {
  kRelu, kNeg, kAbs, kSqrt, kReciprocal, kExp, kLog, kErf, kSigmoid, kTanh, kSilu,
  kGeluErf, kGeluTanh,
  kLeakyRelu,    // x >= 0 ? x : alpha * x
  kHardSigmoid,  // clamp(alpha * x + beta, 0, 1)
  kClip,         // clamp(x, alpha, beta); NaN stays NaN
};

// The scalar parameters of the parameterised unary ops (ignored by the others).
struct UnaryParams {
  float alpha = 0.0f;
  float beta = 0.0f;
};

void BinaryF32(BinaryOp op, const float* a, const float* b, float* out, size_t n);
// Wrapping two's-complement arithmetic; division by zero gives 0; Pow with a
// negative exponent gives 0 unless the base is +-1.
void BinaryI32(BinaryOp op, const int32_t* a, const int32_t* b, int32_t* out, size_t n);
void UnaryF32(UnaryOp op, const float* in, float* out, size_t n, UnaryParams params = {});

// out[i] = cond[i] != 0 ? a[i] : b[i]
void SelectF32(const float* cond, const float* a, const float* b, float* out, size_t n);

}  // namespace npu::kernels
