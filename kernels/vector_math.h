// The Vector unit's elementwise operations (kernels/vector_kernels.h runs them
// on fp32/fp16 operands) and the int32 arithmetic of integer tensors.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npu::kernels {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kEqual, kLess, kGreater,
                      kPRelu,  // a > 0 ? a : b a (torch's prelu)
                      kFmod,   // C's fmod: the remainder with a's sign
                      kMod };  // Python's %: the remainder with b's sign
// Comparisons produce 1.0f / 0.0f (the caller stores them as BOOL).
bool IsComparison(BinaryOp op);

enum class UnaryOp {
  kRelu, kNeg, kAbs, kSqrt, kReciprocal, kExp, kLog, kErf, kSigmoid, kTanh, kSilu,
  kGeluErf, kGeluTanh, kSin, kCos,
  kLeakyRelu,    // x >= 0 ? x : alpha * x
  kHardSigmoid,  // clamp(alpha * x + beta, 0, 1)
  kClip,         // clamp(x, alpha, beta); NaN stays NaN
  kFloor, kCeil,
  kRound,        // to nearest, ties to even
  kSign,         // -1, 0 (+0 for +-0) or 1; NaN stays NaN
  kHardSwish,    // x min(max(x + 3, 0), 6) / 6 (torch's order)
  kSoftplus,     // log(1 + e^x); x past 20: x (torch's threshold)
  kMish,         // x tanh(softplus(x))
  kElu,          // x > 0 ? x : alpha expm1(x)
  kSelu,         // x > 0 ? beta x : alpha expm1(x) (alpha = the ONNX alpha x gamma, beta = gamma)
  kCelu,         // x > 0 ? x : alpha expm1(x beta) (beta = 1 / alpha)
};

// The scalar parameters of the parameterised unary ops (ignored by the others).
struct UnaryParams {
  float alpha = 0.0f;
  float beta = 0.0f;
};

// Wrapping two's-complement arithmetic; division by zero gives 0; Pow with a
// negative exponent gives 0 unless the base is +-1.
void BinaryI32(BinaryOp op, const int32_t* a, const int32_t* b, int32_t* out, size_t n);

}  // namespace npu::kernels
