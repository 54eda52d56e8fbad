#include "kernels/vector_math.h"

#include <algorithm>
#include <cmath>

namespace npu::kernels {
namespace {

// Each loop is a plain, branch-free expression over contiguous arrays so the
// compiler vectorises it; the transcendental ones call libm in fp32, whose
// error (< 1 fp32 ulp) is far inside the 2 fp16 ulp the contract allows.
template <typename F>
inline void Map(const float* in, float* out, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

template <typename F>
inline void Zip(const float* a, const float* b, float* out, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

constexpr float kSqrtHalf = 0.70710678118654752f;
constexpr float kSqrt2OverPi = 0.79788456080286536f;

int32_t PowI32(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 == 0 ? 1 : -1) : 0;
  uint32_t result = 1, b = static_cast<uint32_t>(base);
  while (exp > 0) {  // square and multiply, wrapping like the other int ops
    if (exp & 1) result *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<int32_t>(result);
}

}  // namespace

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kLess || op == BinaryOp::kGreater;
}

void BinaryF32(BinaryOp op, const float* a, const float* b, float* out, size_t n) {
  switch (op) {
    case BinaryOp::kAdd: return Zip(a, b, out, n, [](float x, float y) { return x + y; });
    case BinaryOp::kSub: return Zip(a, b, out, n, [](float x, float y) { return x - y; });
    case BinaryOp::kMul: return Zip(a, b, out, n, [](float x, float y) { return x * y; });
    case BinaryOp::kDiv: return Zip(a, b, out, n, [](float x, float y) { return x / y; });
    case BinaryOp::kPow: return Zip(a, b, out, n, [](float x, float y) { return std::pow(x, y); });
    // NaN propagates, as in torch.maximum / ONNX Max.
    case BinaryOp::kMax:
      return Zip(a, b, out, n, [](float x, float y) { return (x != x || y != y) ? x + y : (x > y ? x : y); });
    case BinaryOp::kMin:
      return Zip(a, b, out, n, [](float x, float y) { return (x != x || y != y) ? x + y : (x < y ? x : y); });
    case BinaryOp::kEqual: return Zip(a, b, out, n, [](float x, float y) { return x == y ? 1.0f : 0.0f; });
    case BinaryOp::kLess: return Zip(a, b, out, n, [](float x, float y) { return x < y ? 1.0f : 0.0f; });
    case BinaryOp::kGreater: return Zip(a, b, out, n, [](float x, float y) { return x > y ? 1.0f : 0.0f; });
  }
}

void BinaryI32(BinaryOp op, const int32_t* a, const int32_t* b, int32_t* out, size_t n) {
  auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = a[i], y = b[i];
    switch (op) {
      case BinaryOp::kAdd: out[i] = wrap(x + y); break;
      case BinaryOp::kSub: out[i] = wrap(x - y); break;
      case BinaryOp::kMul: out[i] = wrap(x * y); break;
      case BinaryOp::kDiv: out[i] = y == 0 ? 0 : wrap(x / y); break;
      case BinaryOp::kPow: out[i] = PowI32(x, y); break;
      case BinaryOp::kMax: out[i] = static_cast<int32_t>(std::max(x, y)); break;
      case BinaryOp::kMin: out[i] = static_cast<int32_t>(std::min(x, y)); break;
      case BinaryOp::kEqual: out[i] = x == y; break;
      case BinaryOp::kLess: out[i] = x < y; break;
      case BinaryOp::kGreater: out[i] = x > y; break;
    }
  }
}

void UnaryF32(UnaryOp op, const float* in, float* out, size_t n, UnaryParams p) {
  switch (op) {
    case UnaryOp::kRelu: return Map(in, out, n, [](float x) { return x > 0.0f ? x : (x != x ? x : 0.0f); });
    case UnaryOp::kNeg: return Map(in, out, n, [](float x) { return -x; });
    case UnaryOp::kAbs: return Map(in, out, n, [](float x) { return std::fabs(x); });
    case UnaryOp::kSqrt: return Map(in, out, n, [](float x) { return std::sqrt(x); });
    case UnaryOp::kReciprocal: return Map(in, out, n, [](float x) { return 1.0f / x; });
    case UnaryOp::kExp: return Map(in, out, n, [](float x) { return std::exp(x); });
    case UnaryOp::kLog: return Map(in, out, n, [](float x) { return std::log(x); });
    case UnaryOp::kErf: return Map(in, out, n, [](float x) { return std::erf(x); });
    case UnaryOp::kSigmoid: return Map(in, out, n, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
    case UnaryOp::kTanh: return Map(in, out, n, [](float x) { return std::tanh(x); });
    case UnaryOp::kSilu: return Map(in, out, n, [](float x) { return x / (1.0f + std::exp(-x)); });
    case UnaryOp::kGeluErf:
      return Map(in, out, n, [](float x) { return 0.5f * x * (1.0f + std::erf(x * kSqrtHalf)); });
    case UnaryOp::kGeluTanh:
      return Map(in, out, n, [](float x) {
        return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
      });
    case UnaryOp::kLeakyRelu: {
      const float alpha = p.alpha;
      return Map(in, out, n, [alpha](float x) { return x >= 0.0f ? x : alpha * x; });
    }
    case UnaryOp::kHardSigmoid: {
      const float alpha = p.alpha, beta = p.beta;
      return Map(in, out, n, [alpha, beta](float x) { return std::clamp(alpha * x + beta, 0.0f, 1.0f); });
    }
    case UnaryOp::kClip: {
      const float lo = p.alpha, hi = p.beta;
      return Map(in, out, n, [lo, hi](float x) { return x != x ? x : std::min(std::max(x, lo), hi); });
    }
  }
}

void SelectF32(const float* cond, const float* a, const float* b, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = cond[i] != 0.0f ? a[i] : b[i];
}

}  // namespace npu::kernels
